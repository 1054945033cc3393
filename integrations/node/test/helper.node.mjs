// The helper under node:test: the same tests as helper.vitest.mjs, with node:test's `t`, whose
// check runs by itself when the test ends. Run by tests/test_node_helper.py.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { server } from "@mockmcp/node";
import { ECHO_SERVER, echo, nextRun } from "./host.mjs";

describe("echo", () => {
  test("replays the cassette named after the test", async (t) => {
    const mock = server(t, { strict: true });
    assert.match(mock.cassette, /test\/cassettes\/helper\.node\/echo\.replays the cassette named after the test\.yaml$/);
    assert.equal(await echo(mock, "hello"), "hello");
  });

  test("fails: a request the cassette never recorded", async (t) => {
    assert.equal(await echo(server(t), "goodbye"), "error -32099");
  });

  test("records once, then replays", async (t) => {
    const cassette = `${process.env.RECORD_DIR}/node.yaml`;
    const options = { cassette, record: "once", server: ECHO_SERVER, substitute: { NOTE: "note-4711" } };
    const first = server(t, options);
    assert.equal(await echo(first, "note-4711"), "note-4711");
    assert.equal((await first.check())[0].recorded.mode, "once");
    assert.match(readFileSync(cassette, "utf8"), /text: '\$\{NOTE\}'/); // the value, recorded as its placeholder
    const again = nextRun(() => server(t, { ...options, strict: true }));
    assert.equal(await echo(again, "note-4711"), "note-4711");
    const [report] = await again.check();
    assert.equal(report.recorded, undefined); // replayed
    assert.equal(report.played, report.interactions);
  });
});
