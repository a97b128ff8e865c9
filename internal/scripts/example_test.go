package scripts_test

import (
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/scripts"
)

// Ms rounds a duration up to whole milliseconds, so that a positive
// duration never becomes 0; Millis turns a reply back, negative counts
// meaning "no bound".
func ExampleMs() {
	fmt.Println(scripts.Ms(1500*time.Microsecond), scripts.Ms(time.Nanosecond))
	fmt.Println(scripts.Millis(250), scripts.Millis(-2))
	// Output:
	// 2 1
	// 250ms -1ns
}
