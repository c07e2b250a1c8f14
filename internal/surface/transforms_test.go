package surface

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/specs"
)

// TestTableMatchesSchema: the table of transforms is what the experiment
// schema offers a config, key for key and value for value, default
// first, and what Transforms holds, field for field; a transform added to
// one and not the others fails here.
func TestTableMatchesSchema(t *testing.T) {
	data, err := specs.FS.ReadFile("experiment.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs struct {
			Interface struct {
				Properties map[string]struct {
					Enum    []string `json:"enum"`
					Default string   `json:"default"`
				} `json:"properties"`
			} `json:"interface"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	props := schema.Defs.Interface.Properties
	keys := map[string]bool{}
	for _, c := range Choices {
		if keys[c.Key] {
			t.Errorf("transform %s: twice in Choices", c.Key)
		}
		keys[c.Key] = true
		p, ok := props[c.Key]
		switch {
		case !ok:
			t.Errorf("transform %s: no interfaces property of that name in the schema", c.Key)
		case !slices.Equal(p.Enum, c.Values) || p.Default != c.Values[0]:
			t.Errorf("transform %s: schema enum %v default %q; table %v default %q", c.Key, p.Enum, p.Default, c.Values, c.Values[0])
		}
	}
	for k := range props {
		if k != "name" && k != "level" && !keys[k] {
			t.Errorf("schema property %s: no transform of that key in Choices", k)
		}
	}

	// Each field of Transforms is one transform's, under its key, and
	// that transform reads and writes it.
	typ := reflect.TypeOf(Transforms{})
	if typ.NumField() != len(Choices) {
		t.Errorf("Transforms has %d fields; Choices %d transforms", typ.NumField(), len(Choices))
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		j := slices.IndexFunc(Choices, func(c Transform) bool { return c.Key == key })
		if j < 0 {
			t.Errorf("Transforms.%s (json %q): no transform of that key in Choices", f.Name, key)
			continue
		}
		var tr Transforms
		reflect.ValueOf(&tr).Elem().Field(i).SetString("x")
		if got := *Choices[j].field(&tr); got != "x" {
			t.Errorf("transform %s reads %q from a Transforms whose %s is x; want its own field", key, got, f.Name)
		}
	}
}

// TestTableValues: every value but a transform's default does something,
// and every choice a value excludes is a value of another transform.
func TestTableValues(t *testing.T) {
	for _, c := range Choices {
		for _, o := range c.options[1:] {
			if o.rename == nil && o.rewrite == nil && o.keep == nil && !o.gold {
				t.Errorf("%s: %s changes nothing; expected a rename, a rewrite, a choice of tools or a gold of its own", c.Key, o.value)
			}
		}
		for _, o := range c.options {
			for _, ex := range o.excludes {
				j := slices.IndexFunc(Choices, func(x Transform) bool { return x.Key == ex.key })
				if j < 0 || ex.key == c.Key || !slices.Contains(Choices[j].Values, ex.value) {
					t.Errorf("%s: %s excludes %s: %s, which is no other transform's value", c.Key, o.value, ex.key, ex.value)
				}
			}
		}
	}
	for _, p := range Presets {
		if ch := p.Transforms.Changes(); len(ch) != 1 || len(p.Transforms.Check()) > 0 {
			t.Errorf("preset %s sets %v (problems %v); want one known value away from its default", p.Name, ch, p.Transforms.Check())
		}
	}
}
