package mcpdomain

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpgranite/granite/internal/combine"
	"github.com/mcpgranite/granite/internal/level"
)

// Store is what every generated domain store offers beyond its typed
// operations.
type Store interface {
	// Reset restores the seed data and ID counters.
	Reset()
	// Snapshot returns the canonical JSON of the whole state: rows in ID
	// order, then the ID counters. Equal states have equal bytes.
	Snapshot() []byte
	// Call runs an operation by name on JSON arguments, bypassing the
	// schema check that the MCP path performs.
	Call(op string, args []byte) (any, error)
	// CloneStore returns a deep copy that shares nothing with the store.
	CloneStore() Store
}

// Rows decodes a store snapshot into rows per collection.
func Rows(snapshot []byte) (map[string][]map[string]any, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(snapshot, &raw); err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", err)
	}
	out := map[string][]map[string]any{}
	for k, v := range raw {
		if k == "next_ids" {
			continue
		}
		var rows []map[string]any
		if err := json.Unmarshal(v, &rows); err != nil {
			return nil, fmt.Errorf("decode snapshot %s: %w", k, err)
		}
		out[k] = rows
	}
	return out, nil
}

// Domain is the registry entry of one generated domain.
type Domain struct {
	Name        string
	Title       string
	Description string
	// SpecSHA256 is the hex SHA-256 of the domain.yaml the code was
	// generated from (speclang.Domain.SHA256).
	SpecSHA256 string
	Entities   []string
	Operations []*Operation
	// Tools holds each level's tools, finest level first.
	Tools     map[level.Level][]*Tool
	NewStore  func() Store
	newServer func(level.Level, Store) (*server.MCPServer, error)
}

// NewDomain is called by generated code to build a registry entry. A tool
// with an action gets its input schema here, computed from its operations'
// (combine.Schema, what the spec language checked the domain with), rather
// than from a copy generated per level.
func NewDomain(d Domain, newServer func(level.Level, Store) (*server.MCPServer, error)) *Domain {
	d.newServer = newServer
	for _, lv := range level.Levels {
		for _, t := range d.Tools[lv] {
			if t.InputSchema == "" && t.HasAction() {
				t.InputSchema = combinedSchema(t)
			}
		}
	}
	return &d
}

// combinedSchema is the input schema of a tool with an action. Generated
// operations carry schemas the generator wrote, so a failure is a
// generator bug.
func combinedSchema(t *Tool) string {
	ops := make([]combine.Op, len(t.Operations))
	for i, o := range t.Operations {
		ops[i] = combine.Op{Name: o.Name, Description: o.Description, Schema: o.Schema}
	}
	s, err := combine.Schema(ops)
	if err != nil {
		panic(fmt.Sprintf("mcpdomain: tool %s: %v", t.Name, err))
	}
	return s
}

// NewServer returns an MCP server exposing st at the given level.
func (d *Domain) NewServer(lv level.Level, st Store) (*server.MCPServer, error) {
	if _, ok := d.Tools[lv]; !ok {
		return nil, fmt.Errorf("domain %s: unknown level %q: want one of L4, L3, L2, L1", d.Name, lv)
	}
	return d.newServer(lv, st)
}

// Operation returns the operation with the given name, or nil.
func (d *Domain) Operation(name string) *Operation {
	for _, o := range d.Operations {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// Tool returns the tool with the given name at a level, or nil.
func (d *Domain) Tool(lv level.Level, name string) *Tool {
	for _, t := range d.Tools[lv] {
		if t.Name == name {
			return t
		}
	}
	return nil
}
