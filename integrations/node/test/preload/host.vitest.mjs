// A host's test under the preload that asks what the cassette never recorded (its argument changed): it must
// fail with the differences. Run by tests/test_node_helper.py, replaying the example's cassette.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { expect, test } from "vitest";

test("fails: a changed argument", async () => {
  const client = new Client({ name: "my-host", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: "mcp-server-everything", args: ["stdio"] }));
  try {
    const result = await client.callTool({ name: "echo", arguments: { message: "sell milk" } });
    expect(result.content[0].text).toBe("Echo: sell milk");
  } finally {
    await client.close();
  }
});
