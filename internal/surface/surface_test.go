package surface

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/level"
)

// coarse is a tool with two actions, a range and an ID pattern: what the
// transforms work on.
func coarse() []Tool {
	list := `{"type":"object","properties":{"zone":{"type":"string","description":"Only items in this zone.","enum":["north","south"]},"min_weight":{"type":"number","description":"Only items at least this heavy. Number from 0 to 500, in kg.","minimum":0,"maximum":500},"max_weight":{"type":"number","description":"Only items at most this heavy. Number from 0 to 500, in kg.","minimum":0,"maximum":500},"limit":{"type":"integer","description":"Return at most this many items (1 to 50; default 50).","minimum":1,"maximum":50}},"additionalProperties":false}`
	get := `{"type":"object","properties":{"item_id":{"type":"string","description":"ID of the item to get, like IT001.","pattern":"^IT[0-9]{3,}$"}},"required":["item_id"],"additionalProperties":false}`
	union := `{"type":"object","properties":{"action":{"type":"string","description":"What to do. list_items: List items. fetch_part: Get one item.","enum":["list_items","fetch_part"]},"zone":{"type":"string","description":"Only items in this zone.","enum":["north","south"]},"min_weight":{"type":"number","description":"Only items at least this heavy. Number from 0 to 500, in kg.","minimum":0,"maximum":500},"max_weight":{"type":"number","description":"Only items at most this heavy. Number from 0 to 500, in kg.","minimum":0,"maximum":500},"limit":{"type":"integer","description":"Return at most this many items (1 to 50; default 50).","minimum":1,"maximum":50},"item_id":{"type":"string","description":"ID of the item to get, like IT001.","pattern":"^IT[0-9]{3,}$"}},"required":["action"],"additionalProperties":false}`
	return []Tool{
		{Name: "stock_query", Description: "Read the stock. Nothing changes.", InputSchema: []byte(union),
			Actions: []Action{{Name: "list_items", Description: "List items.", Schema: []byte(list)}, {Name: "fetch_part", Description: "Get one item.", Schema: []byte(get)}}},
		{Name: "move_item", Description: "Move one item to a zone.", InputSchema: []byte(`{"type":"object","properties":{"item_id":{"type":"string","description":"ID of the item, like IT001.","pattern":"^IT[0-9]{3,}$"},"zone":{"type":"string","enum":["north","south"]}},"required":["item_id","zone"],"additionalProperties":false}`)},
	}
}

func build(t *testing.T, name string) *Interface {
	t.Helper()
	spec, err := Parse(name)
	if err != nil {
		t.Fatal(err)
	}
	iface, err := Build(spec, "depot", coarse())
	if err != nil {
		t.Fatal(err)
	}
	return iface
}

// TestRoundTrip: every interface decodes what it encodes into the level's
// call, for calls with and without ranges and actions.
func TestRoundTrip(t *testing.T) {
	calls := []struct {
		tool string
		args string
	}{
		{"stock_query", `{"action":"list_items","zone":"north","min_weight":10,"max_weight":20.5}`},
		{"stock_query", `{"action":"list_items","max_weight":20}`},
		{"stock_query", `{"action":"fetch_part","item_id":"IT002"}`},
		{"stock_query", `{"action":"list_items"}`},
		{"move_item", `{"item_id":"IT001","zone":"south"}`},
	}
	for _, p := range append([]string{""}, PresetNames()...) {
		name := "L2"
		if p != "" {
			name += "-" + p
		}
		iface := build(t, name)
		for _, c := range calls {
			var args map[string]any
			if err := json.Unmarshal([]byte(c.args), &args); err != nil {
				t.Fatal(err)
			}
			tool, enc, err := iface.Encode(c.tool, args)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(enc)
			src, dec, err := iface.Decode(tool, raw)
			if err != nil {
				t.Fatalf("%s: decode %s %s: %v", name, tool, raw, err)
			}
			var got map[string]any
			if err := json.Unmarshal(dec, &got); err != nil {
				t.Fatal(err)
			}
			if src != c.tool || !reflect.DeepEqual(got, args) {
				t.Errorf("%s: %s %s → %s %s → %s %v; want the level's call back", name, c.tool, c.args, tool, raw, src, got)
			}
		}
	}
}

// TestEncodings pins what a call looks like at each encoding.
func TestEncodings(t *testing.T) {
	args := map[string]any{"action": "list_items", "min_weight": 10.0, "zone": "north"}
	for _, c := range []struct{ iface, tool, want string }{
		{"L2", "stock_query", `{"action":"list_items","min_weight":10,"zone":"north"}`},
		{"L2-nested", "stock_query", `{"action":"list_items","list_items":{"min_weight":10,"zone":"north"}}`},
		{"L2-grouped", "stock_query", `{"action":"list_items","weight":{"min":10},"zone":"north"}`},
		{"L2-nested-grouped", "stock_query", `{"action":"list_items","list_items":{"weight":{"min":10},"zone":"north"}}`},
		{"L2-opaque", "tool_1", `{"action":"list_items","min_weight":10,"zone":"north"}`},
		{"L2-camel", "stockQuery", `{"action":"list_items","min_weight":10,"zone":"north"}`},
		{"L2-prefixed", "depot_stock_query", `{"action":"list_items","min_weight":10,"zone":"north"}`},
	} {
		tool, out, err := build(t, c.iface).Encode("stock_query", args)
		raw, _ := json.Marshal(out)
		if err != nil || tool != c.tool || string(raw) != c.want {
			t.Errorf("%s: %s %s %v; want %s %s", c.iface, tool, raw, err, c.tool, c.want)
		}
	}
}

// TestRefusals: what only the interface can tell is refused with a
// message that says what it expected; what the level judges passes.
func TestRefusals(t *testing.T) {
	for _, c := range []struct{ iface, tool, args, want string }{
		{"L2-nested", "stock_query", `{"action":"list_items","zone":"north"}`, `outside action list_items's object`},
		{"L2-nested", "stock_query", `{"action":"list_items","fetch_part":{}}`, `holds the arguments of action fetch_part`},
		{"L2-nested", "stock_query", `{"action":"list_items","list_items":"north"}`, `expected an object of action list_items's arguments, got a string`},
		{"L2-grouped", "stock_query", `{"action":"list_items","weight":5}`, `expected an object with min, max or both, got a number`},
		{"L2-grouped", "stock_query", `{"action":"list_items","weight":{"low":5}}`, `found "low"; expected only min and max`},
		{"L2-opaque", "stock_query", `{}`, `unknown tool "stock_query": expected one of tool_1, tool_2`},
	} {
		_, _, err := build(t, c.iface).Decode(c.tool, json.RawMessage(c.args))
		var r *Refusal
		if !errors.As(err, &r) || !strings.Contains(r.Msg, c.want) {
			t.Errorf("%s %s: %v; want a refusal saying %q", c.iface, c.args, err, c.want)
		}
	}
	// An unknown action is the level's to name.
	src, out, err := build(t, "L2-nested").Decode("stock_query", json.RawMessage(`{"action":"drop"}`))
	if err != nil || src != "stock_query" || string(out) != `{"action":"drop"}` {
		t.Errorf("unknown action: %s %s %v; want it passed to the level", src, out, err)
	}
}

// TestDescriptionsAndConstraints pins what the words transforms leave.
func TestDescriptionsAndConstraints(t *testing.T) {
	prop := func(iface *Interface, tool int, path ...string) obj {
		t.Helper()
		o, err := parseObj(iface.Tools[tool].InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range path {
			o = o.getObj(p)
		}
		return o
	}
	terse := build(t, "L2-terse")
	if d := terse.Tools[0].Description; d != "Read the stock." {
		t.Errorf("terse tool description %q", d)
	}
	if d := prop(terse, 0, "properties", "min_weight").getString("description"); d != "Only items at least this heavy." {
		t.Errorf("terse argument description %q", d)
	}
	none := build(t, "L2-nodesc")
	if none.Tools[0].Description != "" || strings.Contains(string(none.Tools[0].InputSchema), `"description"`) {
		t.Errorf("nodesc kept descriptions: %q %s", none.Tools[0].Description, none.Tools[0].InputSchema)
	}
	schema := build(t, "L2-schemaonly")
	for _, c := range []struct{ arg, want string }{
		{"min_weight", "Only items at least this heavy."},
		{"item_id", ""},
		{"limit", ""},
		{"zone", "Only items in this zone."},
	} {
		p := prop(schema, 0, "properties", c.arg)
		if d := p.getString("description"); d != c.want {
			t.Errorf("schemaonly %s: %q, want %q", c.arg, d, c.want)
		}
		if _, ok := p.get("minimum"); c.arg == "limit" && !ok {
			t.Errorf("schemaonly dropped the schema's own constraint")
		}
	}
	enums := build(t, "L2-enumtext")
	zone := prop(enums, 0, "properties", "zone")
	if _, ok := zone.get("enum"); ok || zone.getString("description") != "Only items in this zone. One of: north, south." {
		t.Errorf("enumtext zone %v", zone)
	}
	if _, ok := prop(enums, 0, "properties", "action").get("enum"); !ok {
		t.Error("enumtext dropped the action's enum")
	}
}

// TestNames pins every names transform, and refuses a clash.
func TestNames(t *testing.T) {
	for _, c := range []struct {
		how  string
		in   []string
		want []string
	}{
		{"camel", []string{"set_lamp", "read-file", "list"}, []string{"setLamp", "readFile", "list"}},
		{"noun-first", []string{"set_lamp", "stock_query", "readFile", "status"}, []string{"lamp_set", "stock_query", "fileRead", "status"}},
		{"verb-first", []string{"lamp_set", "stock_query", "fileRead"}, []string{"set_lamp", "query_stock", "readFile"}},
		{"prefixed", []string{"set_lamp", "depot_query", "depot"}, []string{"depot_set_lamp", "depot_query", "depot"}},
		{"opaque", []string{"a", "b"}, []string{"tool_1", "tool_2"}},
	} {
		tools := make([]Tool, len(c.in))
		for i, n := range c.in {
			tools[i] = Tool{Name: n}
		}
		got, err := toolNames(c.how, "Depot", tools)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %v: %v %v, want %v", c.how, c.in, got, err, c.want)
		}
	}
	if _, err := toolNames("camel", "x", []Tool{{Name: "set_x"}, {Name: "setX"}}); err == nil || !strings.Contains(err.Error(), `the one name "setX"`) {
		t.Errorf("clash: %v", err)
	}
}

// TestParse reads interface names and refuses bad ones with the reason.
func TestParse(t *testing.T) {
	s, err := Parse("L2-nested-opaque")
	if err != nil || s.Level != level.L2 || s.Actions != "nested" || s.Names != "opaque" || s.Name != "L2-nested-opaque" {
		t.Errorf("Parse: %+v %v", s, err)
	}
	if got := DefaultName(level.L3, Transforms{Descriptions: "terse", Names: "camel"}); got != "L3-terse-camel" {
		t.Errorf("DefaultName = %q", got)
	}
	for _, c := range []struct{ name, want string }{
		{"L5", "unknown level"},
		{"L3-loud", `unknown transform "loud"`},
		{"L3-camel-opaque", "sets names twice"},
		{"L3-nodesc-schemaonly", "already leaves every constraint to the schema"},
		{"L3-nodesc-enumtext", "leaves no description to list the values in"},
	} {
		if _, err := Parse(c.name); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v; want an error saying %q", c.name, err, c.want)
		}
	}
}

// TestMeasure pins the metrics of the level and how transforms move them.
func TestMeasure(t *testing.T) {
	m := Measure(build(t, "L2"), func(s string) int { return len(strings.Fields(s)) }, nil)
	want := Metrics{Tools: 2, ArgsMax: 5, ArgsMean: 3.5, ActionsMax: 2, ActionsMean: 1.5, EnumMax: 2, EnumValues: 6, Depth: 1, Constraints: 8, SchemaOnly: 0}
	m.SchemaBytes, m.SchemaTokens, m.DescriptionChars = 0, 0, 0
	if m != want {
		t.Errorf("L2 metrics %+v\nwant %+v", m, want)
	}
	for _, c := range []struct {
		iface string
		check func(Metrics) bool
	}{
		{"L2-nested", func(m Metrics) bool { return m.Depth == 2 }},
		{"L2-grouped", func(m Metrics) bool { return m.Depth == 2 && m.ArgsMax == 5 }},
		{"L2-schemaonly", func(m Metrics) bool { return m.SchemaOnly == 1 }},
		{"L2-nodesc", func(m Metrics) bool { return m.DescriptionChars == 0 && m.SchemaOnly == 1 }},
		{"L2-enumtext", func(m Metrics) bool { return m.EnumMax == 2 && m.EnumValues == 2 }},
	} {
		if m := Measure(build(t, c.iface), nil, nil); !c.check(m) {
			t.Errorf("%s: %+v", c.iface, m)
		}
	}
}

// TestHostileSchemas: a server's schemas that are odd but JSON (an enum
// that is not a list, properties that are not objects, a oneOf of
// scalars) build under every preset without a panic, and a schema that
// is not an object is refused with the tool named.
func TestHostileSchemas(t *testing.T) {
	odd := `{"type":"object","properties":{"a":{"enum":"x","description":"A. Number from 1 to 2.","minimum":"1"},"b":7,"min_c":{"type":"number"},"max_c":true},"oneOf":[1,"two"],"required":"a"}`
	tools := []Tool{{Name: "odd_tool", Description: "Odd.", InputSchema: []byte(odd)}}
	for _, p := range append([]string{""}, PresetNames()...) {
		name := "L4"
		if p != "" {
			name += "-" + p
		}
		spec, err := Parse(name)
		if err != nil {
			continue // a preset that needs actions is refused at L4 by configs, not here
		}
		iface, err := Build(spec, "odd", tools)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		Measure(iface, nil, nil)
		var r *Refusal
		if _, _, err := iface.Decode(iface.Tools[0].Name, []byte(`{"c":{"min":1}}`)); err != nil && !errors.As(err, &r) {
			t.Errorf("%s: decode: %v; want the level's call or a refusal", name, err)
		}
	}
	if _, err := Build(Spec{Name: "L4", Level: level.L4}, "odd", []Tool{{Name: "bad", InputSchema: []byte(`[1]`)}}); err == nil || !strings.Contains(err.Error(), "tool bad") {
		t.Errorf("a schema that is not an object: %v", err)
	}
}

// TestAtomicComposition: composition atomic leaves out a tool of one
// composite operation and a composite action of a coarse tool, whose
// schema is combined again from the actions left; a call of the action
// left out is refused, one of an action kept decodes as before.
func TestAtomicComposition(t *testing.T) {
	tools := coarse()
	tools[0].Actions[1].Composite = "preset"
	tools = append(tools, Tool{Name: "night_mode", Description: "Every device to night mode.", Composite: "workflow",
		InputSchema: []byte(`{"type":"object","properties":{},"additionalProperties":false}`)})
	written, err := Build(Spec{Name: "L3", Level: "L3"}, "w", tools)
	if err != nil || len(written.Tools) != 3 {
		t.Fatalf("as written: %v, %+v", err, written)
	}
	iface, err := Build(Spec{Name: "L3-atomic", Level: "L3", Transforms: Transforms{Composition: "atomic"}}, "w", tools)
	if err != nil {
		t.Fatal(err)
	}
	if len(iface.Tools) != 2 || iface.Tools[0].Name != "stock_query" || iface.Tools[1].Name != "move_item" {
		t.Fatalf("tools %+v; want stock_query and move_item", iface.Tools)
	}
	schema := string(iface.Tools[0].InputSchema)
	if strings.Contains(schema, "fetch_part") || strings.Contains(schema, "item_id") || !strings.Contains(schema, `"enum":["list_items"]`) {
		t.Errorf("schema %s; want list_items alone, with its own arguments", schema)
	}
	if _, _, err := iface.Decode("stock_query", []byte(`{"action":"fetch_part","item_id":"IT001"}`)); !refused(err) {
		t.Errorf("a call of the action left out: %v; want a refusal", err)
	}
	if src, args, err := iface.Decode("stock_query", []byte(`{"action":"list_items","zone":"north"}`)); err != nil || src != "stock_query" || string(args) != `{"action":"list_items","zone":"north"}` {
		t.Errorf("a call of an action kept: %s %s %v", src, args, err)
	}
	if _, _, err := iface.Decode("night_mode", []byte(`{}`)); !refused(err) {
		t.Errorf("a call of the tool left out: %v; want a refusal", err)
	}
}

func refused(err error) bool {
	var r *Refusal
	return errors.As(err, &r)
}
