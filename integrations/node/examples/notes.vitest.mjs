// integrations/node/examples/notes.vitest.mjs
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { expect, test } from "vitest";

import { server } from "@mockmcp/node";

test("the host echoes a note", async () => {
  // replays examples/cassettes/notes.vitest/the host echoes a note.yaml;
  // MOCKMCP_RECORD=once records it from the real server when it is missing
  const mock = server(expect.getState(), { server: ["node", "test/echo-server.mjs"], strict: true });
  const client = new Client({ name: "my-host", version: "1.0.0" });
  await client.connect(new StdioClientTransport(mock));
  const result = await client.callTool({ name: "echo", arguments: { text: "buy milk" } });
  await client.close();
  expect(result.content[0].text).toBe("buy milk");
  await mock.check(); // throws mockmcp's explanation of any request the cassette could not answer
});
