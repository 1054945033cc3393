// A host over Streamable HTTP, as a program: `node --import @mockmcp/node/register test/preload/http-host.mjs URL`
// calls server-everything's echo at URL and prints the answer. Run by tests/test_node_helper.py, which records the
// real server through the preload, then replays it with the server gone.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const client = new Client({ name: "http-host", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
const result = await client.callTool({ name: "echo", arguments: { message: "hello" } });
await client.close();
console.log(result.content[0].text);
