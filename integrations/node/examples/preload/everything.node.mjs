// integrations/node/examples/preload/everything.node.mjs
// A host's test as it is, nothing of mockmcp in it: `node --import @mockmcp/node/register --test` replays the
// server it starts from examples/cassettes/preload/mcp-server-everything-stdio.yaml
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

test("the host echoes through server-everything", async () => {
  const client = new Client({ name: "my-host", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: "mcp-server-everything", args: ["stdio"] }));
  const result = await client.callTool({ name: "echo", arguments: { message: "buy milk" } });
  await client.close();
  assert.equal(result.content[0].text, "Echo: buy milk");
});
