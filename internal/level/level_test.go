package level

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]Level{"L4": L4, "l3": L3, "2": L2, " L1 ": L1} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := Parse("L5"); err == nil {
		t.Error("L5 accepted")
	}
}
