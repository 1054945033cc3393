// integrations/node/examples/notes.node.mjs
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { server } from "@mockmcp/node";

test("the host echoes a note", async (t) => {
  // given `t`, the helper checks the reports by itself when the test ends
  const mock = server(t, { server: ["node", "test/echo-server.mjs"], strict: true });
  const client = new Client({ name: "my-host", version: "1.0.0" });
  await client.connect(new StdioClientTransport(mock));
  const result = await client.callTool({ name: "echo", arguments: { text: "buy milk" } });
  await client.close();
  assert.equal(result.content[0].text, "buy milk");
});
