package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/internal/faults"
	"github.com/mcpgranite/granite/internal/toolsrc"
)

// FaultCaller is up, an external server's tools, with the faults a
// schedule draws injected into the calls that reach it (inject, as a
// generated domain's server injects them). A proxy in front of a source
// (scenarios/regroup's coarse levels) hands up every call already
// resolved to one of the source's tools, so the operation a call draws
// under is the source tool's name, never the name of the level's tool
// the client called: the third call to a source tool faults alike at L4
// and at L1. tools are the source's tools as it lists them: a call of
// another name is forwarded unfaulted and draws nothing. A nil schedule,
// or one of rate 0, injects nothing, and up is returned as it is.
//
// Each faulted call notes its fault in its context, as a domain's server
// does, so a session's Result.Fault and an observed HTTP call name it.
func FaultCaller(up Caller, tools []toolsrc.Tool, s *faults.Schedule) Caller {
	in := newInjector(options{faults: s})
	if in == nil {
		return up
	}
	ids := make(map[string][]string, len(tools))
	for _, t := range tools {
		ids[t.Name] = IdentifierArgs(t.InputSchema)
	}
	return CallerFunc(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		idArgs, known := ids[req.Params.Name]
		if !known {
			return up.CallTool(ctx, req)
		}
		var err error
		res, kind, failed := inject(in, req.Params.Name, externalEntities(idArgs, requestArgs(req)), func() (*mcp.CallToolResult, bool) {
			var res *mcp.CallToolResult
			res, err = up.CallTool(ctx, req)
			return res, err != nil || res == nil || res.IsError
		}, cutResult)
		if note, ok := ctx.Value(faultNoteKey{}).(*faults.Kind); ok && kind != "" {
			*note = kind
		}
		if failed != "" {
			return mcp.NewToolResultError(failed), nil
		}
		return res, err
	})
}

// IdentifierArgs are the arguments of a tool's input schema that name an
// entity by ID, in the order the schema writes its properties: those
// named "id", or ending in "_id", "Id" or "ID" (device_id, deviceId). An
// external tool has no entities declared, as a spec's operations do, so
// this is the rule that finds them for the offline fault
// (docs/faults.md).
func IdentifierArgs(schema json.RawMessage) []string {
	var top struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &top) != nil || len(top.Properties) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []string
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return out
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return out
		}
		if name := key.(string); entityOf(name) != "" {
			out = append(out, name)
		}
	}
	return out
}

// entityOf is the entity an identifier argument names ("device" of
// device_id and deviceId, "entity" of id), or "" for an argument that is
// not an identifier.
func entityOf(arg string) string {
	switch {
	case arg == "id":
		return "entity"
	case len(arg) > 3 && strings.HasSuffix(arg, "_id"):
		return strings.TrimSuffix(arg, "_id")
	case len(arg) > 2 && (strings.HasSuffix(arg, "Id") || strings.HasSuffix(arg, "ID")):
		return arg[:len(arg)-2]
	}
	return ""
}

// externalEntities are the entities a call's arguments name by ID: each
// identifier argument (IdentifierArgs) holding a non-empty string or a
// number, in the schema's order. An entity is keyed by its ID alone:
// an external server's tools may name one entity by different arguments
// (get_item's id, move_item's item_id), and an entity taken offline
// stops answering to all of them.
func externalEntities(idArgs []string, args json.RawMessage) []namedEntity {
	if len(idArgs) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	var out []namedEntity
	for _, a := range idArgs {
		var id string
		if json.Unmarshal(m[a], &id) != nil {
			var n json.Number
			if json.Unmarshal(m[a], &n) != nil {
				continue
			}
			id = n.String()
		}
		if id != "" {
			out = append(out, namedEntity{entityOf(a), id, id})
		}
	}
	return out
}

// requestArgs are a call's arguments as JSON, however the request holds
// them.
func requestArgs(req mcp.CallToolRequest) json.RawMessage {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments
	}
	switch a := req.Params.Arguments.(type) {
	case json.RawMessage:
		return a
	case []byte:
		return a
	case nil:
		return nil
	}
	b, _ := json.Marshal(req.Params.Arguments)
	return b
}

// cutResult is an external tool's successful reply cut as cutReply cuts
// a domain's: its structured content, and its text where that is JSON,
// the text then carrying the cut value. ok is false where neither can be
// cut (a reply of plain text, a scalar, an empty list).
func cutResult(res *mcp.CallToolResult) (*mcp.CallToolResult, bool) {
	short := *res
	cutAny := false
	if res.StructuredContent != nil {
		if v, ok := cutReply(res.StructuredContent); ok {
			short.StructuredContent, cutAny = v, true
		}
	}
	short.Content = make([]mcp.Content, len(res.Content))
	for i, c := range res.Content {
		short.Content[i] = c
		t, ok := c.(mcp.TextContent)
		if !ok || !json.Valid([]byte(t.Text)) {
			continue
		}
		v, ok := cutReply(json.RawMessage(t.Text))
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		t.Text = string(b)
		short.Content[i], cutAny = t, true
	}
	return &short, cutAny
}
