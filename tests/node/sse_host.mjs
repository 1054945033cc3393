// A host built on the TypeScript SDK client over the legacy HTTP+SSE transport (SSEClientTransport): lists the
// tools, reads a note, counts with an onprogress handler, and prints on stdout, as one JSON line, what it saw
// (the log messages' data in the order they came).
//
//     node tests/node/sse_host.mjs URL     (the server's SSE endpoint, e.g. http://127.0.0.1:8000/sse)

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

if (process.argv.length !== 3) {
  console.error("usage: node sse_host.mjs URL");
  process.exit(2);
}
const client = new Client({ name: "sse-host", version: "1.0.0" });
const seen = { logs: [], progress: [] };
client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => seen.logs.push(note.params.data));
await client.connect(new SSEClientTransport(new URL(process.argv[2])));
const text = (result) => result.content.map((block) => block.text ?? block.type).join(" ");
seen.tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
seen.read = text(await client.callTool({ name: "read_file", arguments: { path: "notes.txt" } }));
seen.count = text(
  await client.callTool({ name: "count_slowly", arguments: { n: 2 } }, undefined, {
    onprogress: (progress) => seen.progress.push([progress.progress, progress.total ?? null, progress.message ?? null]),
  }),
);
console.log(JSON.stringify(seen));
await client.close();
