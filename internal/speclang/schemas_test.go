package speclang

import (
	"encoding/json"
	"os"
	"testing"
)

// TestArgumentSchemas pins the published schema of single arguments where
// the spec knows something the model cannot see: a create's default and
// an update's merge of object keys.
func TestArgumentSchemas(t *testing.T) {
	base, err := os.ReadFile("../../generator/testdata/golden/tiny/domain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Load(specFS(t, map[string]string{"tiny/domain.yaml": string(base)}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ op, arg, want string }{
		{"add_timer", "at", `{"type":"string","description":"When it fires. RFC 3339 UTC timestamp, like 2026-01-01T00:00:00Z. Default: the domain's current time, 2026-01-01T00:00:00Z.","format":"date-time","default":"2026-01-01T00:00:00Z"}`},
		{"set_lamp", "config", `{"type":"object","description":"Keys to change: each given key is merged into the stored config (null removes the key) and the other keys are kept; left out: unchanged. Free-form settings."}`},
		{"set_lamp", "level", `{"type":"integer","description":"New value; left out: unchanged. Brightness. Integer from 0 to 100, in percent.","minimum":0,"maximum":100}`},
	} {
		t.Run(tc.op+"/"+tc.arg, func(t *testing.T) {
			var s struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			for _, o := range spec.Domains[0].Operations {
				if o.Name == tc.op {
					if err := json.Unmarshal([]byte(o.Schema), &s); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := string(s.Properties[tc.arg]); got != tc.want {
				t.Errorf("schema of %s's %s:\ngot  %s\nwant %s", tc.op, tc.arg, got, tc.want)
			}
		})
	}
}
