package mcpdomain

import "github.com/mcpgranite/granite/internal/level"

// Level is a tool granularity level: L4 exposes one tool per atomic
// operation, L1 a single tool for the whole domain. It is defined in the
// leaf package level, which readers of results import without this
// runtime.
type Level = level.Level

// The four levels, finest first.
const (
	L4 = level.L4
	L3 = level.L3
	L2 = level.L2
	L1 = level.L1
)

// Levels lists every level, finest first.
var Levels = level.Levels

// ParseLevel accepts "L4".."L1" (case-insensitive) or "4".."1".
func ParseLevel(s string) (Level, error) { return level.Parse(s) }
