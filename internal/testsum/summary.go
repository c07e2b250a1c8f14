package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent), or of
// the build output the go command interleaves (go build -json's
// BuildEvent: ImportPath and Action build-output or build-fail).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// skip is one skipped test and the reason it printed.
type skip struct {
	pkg, test, reason string
}

// summary is what the stream said: whether anything failed, and the skips.
type summary struct {
	failed bool
	skips  []skip
}

// summarize copies the stream's plain-go-test view to w as it reads, and
// ends with the skipped tests, one per line with its reason.
func summarize(r io.Reader, w io.Writer) (*summary, error) {
	s := &summary{}
	held := map[[2]string][]string{} // a running test's output lines
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", line) // not an event: the go command's own message
			continue
		}
		key := [2]string{e.Package, e.Test}
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Action == "build-fail":
			s.failed = true
		case e.Test == "" && e.Action == "output":
			if !quiet(e.Output) {
				fmt.Fprint(w, e.Output)
			}
		case e.Test == "" && e.Action == "fail":
			s.failed = true
		case e.Test == "":
		case e.Action == "output":
			held[key] = append(held[key], e.Output)
		case e.Action == "fail":
			s.failed = true
			for _, l := range held[key] {
				if !strings.HasPrefix(l, "=== ") {
					fmt.Fprint(w, l)
				}
			}
			delete(held, key)
		case e.Action == "skip":
			s.skips = append(s.skips, skip{e.Package, e.Test, reason(held[key])})
			delete(held, key)
		case e.Action == "pass":
			delete(held, key)
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	s.print(w)
	return s, nil
}

// quiet reports whether a package-level line is one plain go test does not
// print: the verbose mode's markers.
func quiet(out string) bool {
	return out == "PASS\n" || strings.HasPrefix(out, "=== ")
}

// reason is what a skipped test printed, less the markers: t.Skip's
// message with its file:line.
func reason(lines []string) string {
	var kept []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		kept = append(kept, t)
	}
	if len(kept) == 0 {
		return "(no reason given)"
	}
	return strings.Join(kept, " ")
}

func (s *summary) print(w io.Writer) {
	if len(s.skips) == 0 {
		fmt.Fprintln(w, "no test skipped")
		return
	}
	sort.Slice(s.skips, func(i, j int) bool {
		a, b := s.skips[i], s.skips[j]
		return a.pkg < b.pkg || a.pkg == b.pkg && a.test < b.test
	})
	fmt.Fprintf(w, "\n%d %s skipped:\n", len(s.skips), plural(len(s.skips)))
	for _, k := range s.skips {
		fmt.Fprintf(w, "  %s %s: %s\n", k.pkg, k.test, k.reason)
	}
}

func plural(n int) string {
	if n == 1 {
		return "test"
	}
	return "tests"
}
