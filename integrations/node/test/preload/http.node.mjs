// A host's test under the preload over Streamable HTTP: nothing listens at its URL (port 9, discard), and the
// preload replays examples/cassettes/preload/127.0.0.1_9-mcp.yaml there. Run by tests/test_node_helper.py.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

test("replays a server over Streamable HTTP", async () => {
  const client = new Client({ name: "echo-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("http://127.0.0.1:9/mcp")));
  const result = await client.callTool({ name: "echo", arguments: { text: "hello" } });
  await client.close();
  assert.equal(result.content[0].text, "hello");
});
