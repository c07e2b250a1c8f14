package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/mcpdomain"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// The tiny fixture's dim_room workflow lists a room's lit lamps, sets each
// to a level, then adds a timer for a lamp: the seed has LP01 lit in the
// hall and LP02 dark in the den.

// TestWorkflowThroughMCP calls the workflow as a tool at L4 and as an
// action of L1's one tool: the store changes as its steps say, and the
// result lists each call with its arguments, and the results of its writes.
func TestWorkflowThroughMCP(t *testing.T) {
	for _, c := range []struct {
		lv   level.Level
		tool string
		args string
	}{
		{level.L4, "dim_room", `{"room":"hall","level":30,"lamp":"LP02"}`},
		{level.L1, "tiny", `{"action":"dim_room","room":"hall","level":30,"lamp":"LP02"}`},
	} {
		t.Run(string(c.lv), func(t *testing.T) {
			s := newSession(t, tiny.Domain, c.lv)
			text, isErr := s.call(t, c.tool, []byte(c.args))
			if isErr {
				t.Fatalf("dim_room: %s", text)
			}
			var res mcpdomain.WorkflowResult
			if err := json.Unmarshal([]byte(text), &res); err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, cl := range res.Calls {
				calls = append(calls, cl.Call+" "+string(cl.Args))
			}
			want := []string{
				`list_lamps {"on":true,"room":"hall"}`,
				`set_lamp {"lamp_id":"LP01","level":30}`,
				`add_timer {"lamp":"LP02"}`, // at left out by the caller: left out here, so its default applies
			}
			if res.Workflow != "dim_room" || strings.Join(calls, "\n") != strings.Join(want, "\n") {
				t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
			}
			if res.Calls[0].Result != nil || res.Calls[1].Result == nil || res.Calls[2].Result == nil {
				t.Errorf("results: %s; want none for the list that only feeds later steps, one for each write", text)
			}
			rows := snapshotRows(t, s.st)
			if lamp := rows["lamps"][0]; lamp["level"] != 30.0 || lamp["on"] != true {
				t.Errorf("LP01 after dim_room: %v; want level 30, still on", lamp)
			}
			if lamp := rows["lamps"][1]; lamp["level"] != 0.0 {
				t.Errorf("LP02 (den) changed: %v", lamp)
			}
			timers := rows["timers"]
			if len(timers) != 2 || timers[1]["id"] != "TM002" || timers[1]["lamp"] != "LP02" || timers[1]["at"] != "2026-01-01T00:00:00Z" {
				t.Errorf("timers after dim_room: %v; want TM002 for LP02 at the domain's now", timers)
			}
		})
	}
}

// TestWorkflowGivenOptionalArgument: an optional workflow argument the
// caller gives is passed on to the step that binds it.
func TestWorkflowGivenOptionalArgument(t *testing.T) {
	st := tiny.NewStore()
	if _, err := st.Call("dim_room", []byte(`{"room":"den","level":5,"lamp":"LP01","at":"2026-01-02T06:30:00Z"}`)); err != nil {
		t.Fatal(err)
	}
	timers := snapshotRows(t, st)["timers"]
	if len(timers) != 2 || timers[1]["at"] != "2026-01-02T06:30:00Z" {
		t.Errorf("timers: %v; want TM002 at 2026-01-02T06:30:00Z", timers)
	}
}

// TestWorkflowAllOrNothing: a step that fails after earlier steps changed
// the state leaves the store byte for byte as it was, through the MCP path
// and through Store.Call, which skips the schema check (the steps' own
// check then catches the value).
func TestWorkflowAllOrNothing(t *testing.T) {
	cases := []struct {
		name, args, want string
	}{
		{"a value the last step's schema refuses",
			`{"room":"hall","level":30,"lamp":"LP02","at":"tomorrow"}`,
			`workflow dim_room, step 3 (add_timer): argument "at"`},
		{"a value outside the enum, in the first step",
			`{"room":"attic","level":30,"lamp":"LP02"}`,
			`workflow dim_room, step 1 (list_lamps): argument "room": "attic" is not one of hall, den`},
		{"a value above the maximum, in a for_each step",
			`{"room":"hall","level":300,"lamp":"LP02"}`,
			`workflow dim_room, step 2 (set_lamp, element 1 of $lit.items): argument "level": 300 is above the maximum 100`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := tiny.NewStore()
			if _, err := st.Call("set_lamp", []byte(`{"lamp_id":"LP02","on":true,"level":10}`)); err != nil {
				t.Fatal(err)
			}
			before := st.Snapshot()
			_, err := st.Call("dim_room", []byte(c.args))
			if err == nil || !mcpdomain.IsToolError(err) || !strings.HasPrefix(err.Error(), c.want) || !strings.HasSuffix(err.Error(), "; nothing was changed") {
				t.Fatalf("got %v\nwant a tool error starting %q", err, c.want)
			}
			if after := st.Snapshot(); !bytes.Equal(before, after) {
				t.Errorf("the store changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	// A row that does not exist is refused before any step runs.
	st := tiny.NewStore()
	before := st.Snapshot()
	if _, err := st.Call("dim_room", []byte(`{"room":"hall","level":30,"lamp":"LP99"}`)); err == nil || !strings.HasPrefix(err.Error(), `argument "lamp": lamp "LP99" does not exist`) {
		t.Errorf("a lamp that does not exist: %v; want it refused before any step", err)
	}
	if !bytes.Equal(before, st.Snapshot()) {
		t.Error("a refused workflow changed the store")
	}
	s := newSession(t, tiny.Domain, level.L4)
	before = s.st.Snapshot()
	text, isErr := s.call(t, "dim_room", []byte(`{"room":"hall","level":30,"lamp":"LP99"}`))
	if !isErr || !strings.Contains(text, `lamp "LP99" does not exist`) {
		t.Fatalf("got %s (isError %v)", text, isErr)
	}
	if after := s.st.Snapshot(); !bytes.Equal(before, after) {
		t.Errorf("the store changed through MCP:\nbefore %s\nafter  %s", before, after)
	}
}

func snapshotRows(t *testing.T, st mcpdomain.Store) map[string][]map[string]any {
	t.Helper()
	rows, err := mcpdomain.Rows(st.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestWorkflowIsAtomicToOtherCallers runs workflows while other goroutines
// take snapshots: each workflow sets LP01's level and then adds a timer
// whose minute is that level, and no snapshot may see one without the
// other, as it would if another caller ran between the steps.
func TestWorkflowIsAtomicToOtherCallers(t *testing.T) {
	st := tiny.NewStore()
	const runs = 40
	done := make(chan error, runs)
	for i := range runs {
		go func() {
			args := fmt.Sprintf(`{"room":"hall","level":%d,"lamp":"LP01","at":"2026-01-02T00:%02d:00Z"}`, i+1, i+1)
			_, err := st.Call("dim_room", []byte(args))
			done <- err
		}()
	}
	check := func() {
		rows := snapshotRows(t, st)
		timers := rows["timers"]
		last := timers[len(timers)-1]
		level := int(rows["lamps"][0]["level"].(float64))
		if len(timers) == 1 {
			if level != 80 {
				t.Errorf("LP01 at level %d before any timer was added", level)
			}
			return
		}
		if want := fmt.Sprintf("2026-01-02T00:%02d:00Z", level); last["at"] != want {
			t.Errorf("LP01 at level %d but the last timer at %v; want %s", level, last["at"], want)
		}
	}
	for range runs {
		check()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	check()
	if n := len(snapshotRows(t, st)["timers"]); n != runs+1 {
		t.Errorf("%d timers, want %d", n, runs+1)
	}
}
