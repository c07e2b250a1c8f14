// The throughput baseline: an MCP server written with the official
// TypeScript SDK that offers one tool equivalent to a generated one. It
// takes the tool's name and JSON Schema from $GRANITE_TOOL and
// $GRANITE_SCHEMA, validates arguments with Ajv (as the generated server
// validates with jsonschema) and answers $GRANITE_RESULT, as text and as
// structured content, as the generated server does. argv: stdio, or
// http <port> (streamable HTTP at /mcp, one transport per session).
import http from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const name = process.env.GRANITE_TOOL;
const schema = JSON.parse(process.env.GRANITE_SCHEMA);
const result = process.env.GRANITE_RESULT;
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(schema);

function newServer() {
  const server = new Server({ name: "sdk-baseline", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name, description: "baseline", inputSchema: schema }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    if (req.params.name !== name) {
      return { isError: true, content: [{ type: "text", text: `unknown tool ${req.params.name}` }] };
    }
    if (!validate(req.params.arguments ?? {})) {
      return { isError: true, content: [{ type: "text", text: ajv.errorsText(validate.errors) }] };
    }
    // Like the generated server: the row as text and as structured content.
    return { content: [{ type: "text", text: result }], structuredContent: JSON.parse(result) };
  });
  return server;
}

if (process.argv[2] === "stdio") {
  await newServer().connect(new StdioServerTransport());
} else {
  const transports = new Map();
  const port = Number(process.argv[3]);
  http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const sid = req.headers["mcp-session-id"];
    let transport = sid && transports.get(sid);
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  }).listen(port, "127.0.0.1", () => console.error(`listening on http://127.0.0.1:${port}/mcp`));
}
