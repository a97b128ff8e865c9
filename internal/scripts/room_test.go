package scripts

import (
	"testing"
	"time"
)

// A boxed duration is its own milliseconds, whatever was boxed before it
// in its slot, and the same box when asked again.
func TestBoxMs(t *testing.T) {
	ds := []time.Duration{30 * time.Second, 30*time.Second + 16*time.Millisecond, time.Nanosecond, 0, -time.Millisecond, 30 * time.Second}
	for range 2 {
		for _, d := range ds {
			if got := boxMs(d).(int64); got != Ms(d) {
				t.Fatalf("boxMs(%v) = %d, want %d", d, got, Ms(d))
			}
		}
	}
	d := 45 * time.Second
	if a, b := boxMs(d), boxMs(d); a != b || testing.AllocsPerRun(10, func() { boxMs(d) }) != 0 {
		t.Errorf("a duration asked for twice was boxed again")
	}
}

// Room's KEYS, their boxes and ARGV hold what was asked for, and
// appending past the room of one leaves the others as they were.
func TestRoom(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {3, 2}, {4, 4}, {5, 2}, {8, 16}, {9, 3}, {2, 20}} {
		keys, boxes, args := Room(c[0], c[1])
		if len(keys) != 0 || cap(keys) != c[0] || len(boxes) != 0 || cap(boxes) != c[0] || len(args) != 0 || cap(args) != c[1] {
			t.Fatalf("Room(%d, %d): keys %d/%d, boxes %d/%d, args %d/%d", c[0], c[1], len(keys), cap(keys), len(boxes), cap(boxes), len(args), cap(args))
		}
		for i := range c[1] {
			args = append(args, i)
		}
		for i := range c[0] {
			boxes = append(boxes, -i)
		}
		for range c[0] + 4 {
			keys = append(keys, "k")
			boxes = append(boxes, "b")
		}
		for i, v := range args {
			if v != i {
				t.Fatalf("Room(%d, %d): argument %d is %v after the keys grew", c[0], c[1], i, v)
			}
		}
		for i := range c[0] {
			if boxes[i] != -i {
				t.Fatalf("Room(%d, %d): box %d is %v after the keys grew", c[0], c[1], i, boxes[i])
			}
		}
	}
}
