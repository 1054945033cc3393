// integrations/node/examples/preload/everything.vitest.mjs
// A host's test as it is, nothing of mockmcp in it: `node --import @mockmcp/node/register` (vitest.config.mjs)
// replays the server it starts from examples/cassettes/preload/mcp-server-everything-stdio.yaml
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { expect, test } from "vitest";

test("the host echoes through server-everything", async () => {
  const client = new Client({ name: "my-host", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: "mcp-server-everything", args: ["stdio"] }));
  const result = await client.callTool({ name: "echo", arguments: { message: "buy milk" } });
  await client.close();
  expect(result.content[0].text).toBe("Echo: buy milk");
});
