package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// FromMCP lists the tools of a live MCP server: a command speaking stdio
// (cmd) or a streamable HTTP endpoint (url), through mcp-go's client.
func FromMCP(ctx context.Context, cmd, url string) ([]Tool, error) {
	var c *client.Client
	var err error
	switch {
	case cmd != "":
		f := strings.Fields(cmd)
		c, err = client.NewStdioMCPClient(f[0], nil, f[1:]...)
	case url != "":
		c, err = client.NewStreamableHttpClient(url)
		if err == nil {
			err = c.Start(ctx)
		}
	default:
		return nil, fmt.Errorf("no MCP server given")
	}
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer c.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "granite-synth", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	var out []Tool
	for _, t := range res.Tools {
		// Re-decode the tool as the wire carried it, keeping every schema
		// keyword (mcp-go's typed schema drops some at the top level).
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		var tool Tool
		if err := json.Unmarshal(b, &tool); err != nil {
			return nil, err
		}
		out = append(out, tool)
	}
	return out, nil
}
