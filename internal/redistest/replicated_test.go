package redistest

import "testing"

func TestSlot(t *testing.T) {
	for key, want := range map[string]int{
		"foo":        12182,
		"{foo}:bar":  12182,
		"x{foo}y{z}": 12182,
		"{}foo":      Slot("{}foo"),
		"a{":         int(crc16("a{") % slotCount),
	} {
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
	if Slot("{}foo") == Slot("foo") {
		t.Errorf("an empty tag must hash the whole key")
	}
}
