package speclang

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Pos is a position in a spec file.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Error is one problem found in a spec, with where it is and what was
// expected there.
type Error struct {
	Pos Pos
	// Path is the JSON path of the offending value, like
	// $.operations.lock_all.filters[0].
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Pos, e.Path, e.Msg)
}

// ErrorList is every problem found in a set of specs, in file and position
// order. It is returned whole: a spec author fixes all of them in one pass.
type ErrorList []*Error

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (l ErrorList) sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// Err returns the list as an error, or nil when it is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	l.sort()
	return l
}

// WithDir returns the list with dir joined before each file name, for
// messages relative to the user's working directory.
func WithDir(dir string, l ErrorList) ErrorList {
	out := make(ErrorList, len(l))
	for i, e := range l {
		c := *e
		c.Pos.File = path.Join(dir, c.Pos.File)
		out[i] = &c
	}
	return out
}
