package progress

import (
	"bytes"
	"strings"
	"testing"
)

// TestLogLinesOffATerminal: off a terminal every label is a log line and
// the last unit always draws one, with the unit named; resumed units
// count as done but not in the rate.
func TestLogLinesOffATerminal(t *testing.T) {
	var b bytes.Buffer
	p := New(&b, false, 3, 1, "trials")
	p.Label("model m")
	p.Done()
	p.Done()
	p.Finish()
	out := b.String()
	for _, want := range []string{"resuming: 1 of 3 trials already recorded\n", " model m\n", " 3/3 trials, ", "ETA 0s, model m\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\r") {
		t.Errorf("a log must not redraw in place:\n%q", out)
	}
}

// TestBarOnATerminal: on a terminal the bar is redrawn in place and the
// line ended when finished; a nil bar draws nothing and does not panic.
func TestBarOnATerminal(t *testing.T) {
	var b bytes.Buffer
	p := New(&b, true, 2, 0, "scenarios")
	p.Label("enrich")
	p.Done()
	p.Done()
	p.Finish()
	out := b.String()
	if !strings.Contains(out, "\r[==============================] 2/2 ") || !strings.HasSuffix(out, "\n") || strings.Contains(out, "enrich\n") {
		t.Errorf("bar:\n%q", out)
	}
	var none *Bar
	none.Label("x")
	none.Done()
	none.Finish()
}

// TestLabelEscapesNames: a label names a model from a config, which can
// hold a terminal escape or a line break; neither reaches the output raw,
// on a terminal or off it.
func TestLabelEscapesNames(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		var b bytes.Buffer
		p := New(&b, terminal, 1, 0, "trials")
		p.Label("model evil\x1b[2J\rover\nline\u202e")
		p.Done()
		p.Finish()
		out := b.String()
		// The bar's own \r and \x1b[K are the only control sequences.
		out = strings.ReplaceAll(strings.ReplaceAll(out, "\r[", "["), "\x1b[K", "")
		if strings.ContainsAny(out, "\x1b\r\u202e") || strings.Contains(out, "\nline") {
			t.Errorf("terminal %v: a name's control characters are raw:\n%q", terminal, out)
		}
		if !strings.Contains(out, `model evil\x1b[2J\x0dover\x0aline\u202e`) {
			t.Errorf("terminal %v: the label is not escaped:\n%q", terminal, out)
		}
	}
}
