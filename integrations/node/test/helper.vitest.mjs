// The helper under vitest: replay a shipped cassette named after the test, fail a test with the
// explanation of a miss, record once and then replay. Run by tests/test_node_helper.py, which
// expects exactly the test named "fails" to fail.
import { describe, expect, test } from "vitest";

import { httpServer, server } from "@mockmcp/node";
import { ECHO_SERVER, echo, echoOverHttp, nextRun } from "./host.mjs";

describe("echo", () => {
  test("replays the cassette named after the test", async () => {
    const mock = server(expect.getState(), { strict: true });
    expect(mock.cassette).toMatch(/test\/cassettes\/helper\.vitest\/echo\.replays the cassette named after the test\.yaml$/);
    expect(await echo(mock, "hello")).toBe("hello");
    const [report] = await mock.check();
    expect(report.played).toBe(report.interactions);
  });

  test("replays over Streamable HTTP", async () => {
    const mock = await httpServer(expect.getState(), { strict: true });
    expect(mock.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(await echoOverHttp(mock, "hello")).toBe("hello");
    const [report] = await mock.check(); // stops the server, which writes its report
    expect(report.played).toBe(report.interactions);
  });

  test("fails: a request the cassette never recorded", async (context) => {
    const mock = server(context); // checked when the test finishes
    expect(await echo(mock, "goodbye")).toBe("error -32099");
  });

  test("records once, then replays", async () => {
    const cassette = `${process.env.RECORD_DIR}/vitest.yaml`;
    const options = { cassette, record: "once", server: ECHO_SERVER, strict: true };
    const first = server(expect.getState(), options);
    expect(await echo(first, "recorded")).toBe("recorded");
    expect((await first.check())[0].recorded).toMatchObject({ mode: "once", status: 0 });
    const again = nextRun(() => server(expect.getState(), options));
    expect(await echo(again, "recorded")).toBe("recorded");
    const [report] = await again.check();
    expect(report.recorded).toBeUndefined();
    expect(report.played).toBe(report.interactions);
  });
});
