// A host built on the TypeScript SDK client: launches a stdio server, calls one tool with an
// onprogress handler (default request options otherwise), and prints on stdout, as one JSON line,
// what it saw in the order it saw it: each progress notification, then the result or the error.
//
//     node tests/node/progress_host.mjs TOOL JSON_ARGS -- SERVER_COMMAND...

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
if (split !== 2 || argv.length < 4) {
  console.error("usage: node progress_host.mjs TOOL JSON_ARGS -- SERVER_COMMAND...");
  process.exit(2);
}
const [tool, args] = argv;
const [command, ...commandArgs] = argv.slice(3);

const transport = new StdioClientTransport({ command, args: commandArgs, env: process.env, stderr: "inherit" });
const client = new Client({ name: "progress-host", version: "1.0.0" });
const seen = [];
await client.connect(transport);
try {
  const result = await client.callTool({ name: tool, arguments: JSON.parse(args) }, undefined, {
    onprogress: (progress) => seen.push({ progress: progress.progress, total: progress.total ?? null }),
  });
  seen.push({ result: result.content.map((block) => block.text ?? block.type).join(" ") });
} catch (error) {
  seen.push({ error: String(error.code ?? ""), message: String(error.message) });
}
console.log(JSON.stringify(seen));
await client.close();
