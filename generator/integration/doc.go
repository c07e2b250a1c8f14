// Package integration exercises the committed generated code under gen/
// through the real MCP path: an mcp-go client talking to each generated
// server in process. It holds tests only; see integration_test.go.
package integration
