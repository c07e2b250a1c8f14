package agent

import (
	"fmt"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/serve"
)

// connWatch counts, on the server's side, the requests that show how an
// agent command connected to its trial's server (serve.Options.OnRequest).
type connWatch struct {
	initialize, toolsList, badToken, noToken atomic.Int64
}

// see counts one request the trial's server received.
func (c *connWatch) see(s serve.Seen) {
	switch {
	case s.Refused && s.NoToken:
		c.noToken.Add(1)
	case s.Refused:
		c.badToken.Add(1)
	case s.Method == string(mcp.MethodInitialize):
		c.initialize.Add(1)
	case s.Method == string(mcp.MethodToolsList):
		c.toolsList.Add(1)
	}
}

// connection is what the record keeps of it.
func (c *connWatch) connection() *results.Connection {
	return &results.Connection{Initialize: int(c.initialize.Load()), ToolsList: int(c.toolsList.Load()), BadToken: int(c.badToken.Load()), NoToken: int(c.noToken.Load())}
}

// notConnected classes a trial whose agent never read its tools nor
// called one, and says why in words that point at the entry's fix; it is
// "" for an agent that did either. Such an agent answered, if at all,
// without ever seeing the task's tools: its TC 0 says nothing about the
// interface, and the record must not pass it off as a choice.
func notConnected(c *results.Connection, calls int) (results.ErrorClass, string) {
	if calls > 0 || c.ToolsList > 0 {
		return "", ""
	}
	switch {
	// A session opened with the token, then a request without it, is a
	// client that ends sessions without its headers (mcp-go's DELETE),
	// not one that lacks the token.
	case c.BadToken > 0 || c.NoToken > 0 && c.Initialize == 0:
		return results.ErrBadToken, fmt.Sprintf("the agent never reached its tools: %d request(s) came with a wrong bearer token and %d without one; its client must send the Authorization header the configuration granite wrote holds (or Bearer $GRANITE_MCP_TOKEN)", c.BadToken, c.NoToken)
	case c.Initialize > 0:
		return results.ErrNotConnected, fmt.Sprintf("the agent opened %d session(s) but never listed the tools nor called one: its client did not offer granite's server to the model (disabled, untrusted, or filtered out by the agent's settings)", c.Initialize)
	}
	return results.ErrNotConnected, "the agent never connected to its trial's server: no request reached it; make its command read the configuration granite wrote ({{.MCPConfig}}, in the format mcp_config names) or GRANITE_MCP_URL and GRANITE_MCP_TOKEN"
}
