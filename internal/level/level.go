// Package level names the tool granularity levels of the benchmark: the one
// Level type of the module, which the spec language, the runtime, generated
// code and the results all use. It is a leaf, so that naming a level links
// nothing else.
package level

import (
	"fmt"
	"strings"
)

// Level is a tool granularity level: L4 exposes one tool per atomic
// operation, L1 a single tool for the whole domain.
type Level string

// The four levels, finest first.
const (
	L4 Level = "L4"
	L3 Level = "L3"
	L2 Level = "L2"
	L1 Level = "L1"
)

// Levels lists every level, finest first.
var Levels = []Level{L4, L3, L2, L1}

// Parse accepts "L4".."L1" (case-insensitive) or "4".."1".
func Parse(s string) (Level, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(t, "L") {
		t = "L" + t
	}
	for _, l := range Levels {
		if Level(t) == l {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown level %q: want one of L4, L3, L2, L1", s)
}
