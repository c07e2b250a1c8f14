package mcpdomain

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// callLog is a Store whose operations record their arguments: list_things
// returns a list result, set_thing echoes, and inner runs a workflow on the
// same store, as a generated workflow that calls another does.
type callLog struct {
	calls []string
}

var (
	logList = &Operation{Name: "list_things", Schema: `{"type":"object","properties":{"tag":{"type":"string","enum":["a","b"]}},"additionalProperties":false}`}
	logSet  = &Operation{Name: "set_thing", Schema: `{"type":"object","properties":{"id":{"type":"string"},"n":{"type":"integer","maximum":10},"tag":{"type":"string"}},"required":["id"],"additionalProperties":false}`}
	// logSetSmall is set_thing with a lower maximum, which TH007's n passes.
	logSetSmall = &Operation{Name: "set_thing", Schema: `{"type":"object","properties":{"id":{"type":"string"},"n":{"type":"integer","maximum":5}},"required":["id"],"additionalProperties":false}`}
	logWF       = &Operation{Name: "inner", Schema: `{"type":"object","properties":{"tag":{"type":"string"}},"additionalProperties":false}`}
)

var innerSteps = []Step{{Op: logSet, With: `{"id":"X9","tag":"$tag"}`}}

func (l *callLog) Reset()            {}
func (l *callLog) Snapshot() []byte  { return nil }
func (l *callLog) CloneStore() Store { return l }
func (l *callLog) Call(op string, args []byte) (any, error) {
	l.calls = append(l.calls, op+" "+string(args))
	switch op {
	case "list_things":
		return ListResult[row]{Entity: "thing", Count: 2, Total: 2, Items: []row{{"TH001", 1}, {"TH007", 7}}}, nil
	case "inner":
		var a struct {
			Tag string `json:"tag,omitempty"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return RunWorkflow(l, "inner", innerSteps, a)
	}
	return json.RawMessage(args), nil
}

func TestRunWorkflowBindings(t *testing.T) {
	steps := []Step{
		{Op: logList, With: `{"tag":"$tag"}`, As: "found"},
		{Op: logSet, ForEach: "$found.items", With: `{"id":"$item.id","n":"$item.n","tag":"$tag"}`, As: "sets"},
		{Op: logSet, With: `{"id":"$found.items.1.id","n":3}`},
		{Op: logWF, With: `{"tag":"$tag"}`},
	}
	for _, c := range []struct {
		name, args string
		want       []string
	}{
		{"all given", `{"tag":"a"}`, []string{
			`list_things {"tag":"a"}`,
			`set_thing {"id":"TH001","n":1,"tag":"a"}`,
			`set_thing {"id":"TH007","n":7,"tag":"a"}`,
			`set_thing {"id":"TH007","n":3}`,
			`inner {"tag":"a"}`,
			`set_thing {"id":"X9","tag":"a"}`,
		}},
		{"optional left out", `{}`, []string{
			`list_things {}`,
			`set_thing {"id":"TH001","n":1}`,
			`set_thing {"id":"TH007","n":7}`,
			`set_thing {"id":"TH007","n":3}`,
			`inner {}`,
			`set_thing {"id":"X9"}`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &callLog{}
			var args map[string]any
			if err := json.Unmarshal([]byte(c.args), &args); err != nil {
				t.Fatal(err)
			}
			res, err := RunWorkflow(l, "outer", steps, args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, l.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if len(res.Calls) != 5 || res.Calls[4].Call != "inner" {
				t.Errorf("result calls: %+v; want the 5 calls of outer, inner's inside its result", res.Calls)
			}
		})
	}
}

func TestRunWorkflowFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []Step
		want  string
	}{
		{"value refused by the step's schema",
			[]Step{{Op: logList, With: `{"tag":"$tag"}`}},
			`workflow w, step 1 (list_things): argument "tag": "c" is not one of a, b; nothing was changed`},
		{"for_each over a value that is not a list",
			[]Step{{Op: logList, As: "found"}, {Op: logSet, ForEach: "$found.count", With: `{"id":"$item"}`}},
			`workflow w, step 2 (set_thing): $found.count is a number, not a list to call set_thing for each element of; nothing was changed`},
		{"a path the result does not have",
			[]Step{{Op: logList, As: "found"}, {Op: logSet, With: `{"id":"$found.items.5.id"}`}},
			`workflow w, step 2 (set_thing): $found.items.5.id: "5" is not an index of a list of 2; nothing was changed`},
		{"an element's value above the maximum",
			[]Step{{Op: logList, As: "found"}, {Op: logSetSmall, ForEach: "$found.items", With: `{"id":"$item.id","n":"$item.n"}`}},
			`workflow w, step 2 (set_thing, element 2 of $found.items): argument "n": 7 is above the maximum`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := RunWorkflow(&callLog{}, "w", c.steps, map[string]any{"tag": "c"})
			if err == nil || !IsToolError(err) || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got %v\nwant a tool error starting %q", err, c.want)
			}
		})
	}
}
