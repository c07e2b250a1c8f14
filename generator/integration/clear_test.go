package integration

import (
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/testdomain/tiny"
)

// TestUpdateClearsAField: an update's clear_<field> removes an optional
// field's value (the output leaves it out); given with a new value for the
// same field it is refused, and nothing changes.
func TestUpdateClearsAField(t *testing.T) {
	s := newSession(t, tiny.Domain, level.L4)
	if text, isErr := s.call(t, "set_lamp", []byte(`{"lamp_id":"LP01","clear_config":true}`)); isErr || strings.Contains(text, `"config"`) {
		t.Fatalf("clear_config: %s (error %v); want LP01 without its config", text, isErr)
	}
	if lamp := snapshotRows(t, s.st)["lamps"][0]; lamp["config"] != nil {
		t.Errorf("LP01 after clear_config: %v; want no config", lamp)
	}
	before := string(s.st.Snapshot())
	text, isErr := s.call(t, "set_lamp", []byte(`{"lamp_id":"LP01","config":{"color":"cold"},"clear_config":true}`))
	if !isErr || !strings.Contains(text, "found config and clear_config: true; expected a new config or its removal, not both") {
		t.Errorf("config and clear_config: %s (error %v); want a refusal naming both", text, isErr)
	}
	if string(s.st.Snapshot()) != before {
		t.Error("a refused update changed the store")
	}
}
