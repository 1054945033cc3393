// A small MCP server on the TypeScript SDK, over stdio: the real server the helper's tests record.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "echo", version: "1.0.0" });
server.tool("echo", "Say the text back.", { text: z.string() }, async ({ text }) => ({
  content: [{ type: "text", text }],
}));
await server.connect(new StdioServerTransport());
process.stdin.on("end", () => process.exit(0)); // exit when the host closes stdin, as a server should
