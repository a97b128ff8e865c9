package rt

import (
	"reflect"
	"testing"
)

// A request record decodes to the reply it holds; a cancelled one to
// nothing applied; an unreadable one to an error, never to "not applied".
func TestDecodeRecord(t *testing.T) {
	for _, tc := range []struct {
		rec     string
		reply   any
		applied bool
		bad     bool
	}{
		{rec: "n1", reply: int64(1), applied: true},
		{rec: "n-2", reply: int64(-2), applied: true},
		{rec: "a1,3", reply: []any{int64(1), int64(3)}, applied: true},
		{rec: "a", reply: []any{}, applied: true},
		{rec: "x"},
		{rec: "CANCELLED"},
		{rec: "", bad: true},
		{rec: "n", bad: true},
		{rec: "n1,2", bad: true},
		{rec: "a1,b", bad: true},
		{rec: "q1", bad: true},
	} {
		reply, applied, err := decodeRecord(tc.rec)
		if (err != nil) != tc.bad || applied != tc.applied || !reflect.DeepEqual(reply, tc.reply) {
			t.Errorf("decodeRecord(%q) = %v, %v, %v; want %v, %v, error %v", tc.rec, reply, applied, err, tc.reply, tc.applied, tc.bad)
		}
	}
}
