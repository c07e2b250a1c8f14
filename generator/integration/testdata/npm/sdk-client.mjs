// A client written with the official TypeScript SDK: it connects to a
// granite server over stdio (argv: stdio <command> <args...>) or streamable
// HTTP (argv: http <url>), lists the tools, calls one with the JSON
// arguments in $GRANITE_TOOL / $GRANITE_ARGS, and prints what came back.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, ...rest] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: rest[0], args: rest.slice(1) })
  : new StreamableHTTPClientTransport(new URL(rest[0]));
const client = new Client({ name: "granite-sdk-client", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const result = await client.callTool({ name: process.env.GRANITE_TOOL, arguments: JSON.parse(process.env.GRANITE_ARGS) });
console.log(JSON.stringify({ tools: tools.map((t) => ({ name: t.name, annotations: t.annotations })), result }));
await client.close();
