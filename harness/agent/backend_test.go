package agent

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpgranite/granite/specs"
)

// TestEveryBackendIsRegistered: the experiment schema's backend names and
// the registry's are the same, so that a config the schema accepts always
// finds its kind, and a kind added to the registry is one a config can
// name.
func TestEveryBackendIsRegistered(t *testing.T) {
	data, err := specs.FS.ReadFile("experiment.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Models struct {
				Items struct {
					Properties struct {
						Backend struct {
							Enum []string `json:"enum"`
						} `json:"backend"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"models"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	named := schema.Properties.Models.Items.Properties.Backend.Enum
	var registered []string
	for _, b := range Backends() {
		if b.Name() != BackendBuiltin {
			registered = append(registered, b.Name())
		}
	}
	slices.Sort(named)
	slices.Sort(registered)
	if len(named) == 0 || !slices.Equal(named, registered) {
		t.Errorf("the schema names backends %v, the registry %v; want the same", named, registered)
	}
}

// TestContextNotes: every kind that sets its models' context says how,
// under its name, and no other kind does.
func TestContextNotes(t *testing.T) {
	notes := ContextNotes()
	for _, b := range Backends() {
		_, sets := b.(ContextSetter)
		if n, ok := notes[b.Name()]; ok != sets || sets && n == "" {
			t.Errorf("%s: note %q (present %v); want one exactly when it is a ContextSetter (%v)", b.Name(), n, ok, sets)
		}
	}
	if len(notes) == 0 {
		t.Error("no kind says how its context is set")
	}
}
