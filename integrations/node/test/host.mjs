// The TypeScript host the helper's tests drive: the SDK's client over stdio, one echo call.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export const ECHO_SERVER = ["node", new URL("echo-server.mjs", import.meta.url).pathname];

/** Launch the server `mock` names, call echo with `text`, close; what came back (the text, or the error). */
export async function echo(mock, text) {
  const client = new Client({ name: "echo-host", version: "1.0.0" });
  await client.connect(new StdioClientTransport(mock));
  try {
    const result = await client.callTool({ name: "echo", arguments: { text } });
    return result.content[0].text;
  } catch (error) {
    return `error ${error.code}`;
  } finally {
    await client.close();
  }
}

/** The same call over Streamable HTTP, to the URL of `mock` (an `httpServer`). */
export async function echoOverHttp(mock, text) {
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const client = new Client({ name: "echo-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(mock.url)));
  try {
    const result = await client.callTool({ name: "echo", arguments: { text } });
    return result.content[0].text;
  } finally {
    await client.close();
  }
}

/** What `start` returns, started as the suite's next run would start it, as far as mockmcp can tell: a later start
 * by this same process records into the cassette its run began (a host that starts its server twice); with the
 * cache off (an empty MOCKMCP_CACHE_DIR) every start is a run of its own. */
export function nextRun(start) {
  const kept = process.env.MOCKMCP_CACHE_DIR;
  process.env.MOCKMCP_CACHE_DIR = "";
  try {
    return start();
  } finally {
    if (kept === undefined) delete process.env.MOCKMCP_CACHE_DIR;
    else process.env.MOCKMCP_CACHE_DIR = kept;
  }
}
