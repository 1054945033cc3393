// mockmcp for TypeScript hosts' tests: the server command a test gives its MCP client, and the verdict
// after the client closed. Plain ESM, no build step, nothing imported but Node's own modules.
//
// Theory of operation. A test spawns its server as a command; `server()` returns that command as
// `mockmcp exec -o C --record-mode M --report DIR/report-{pid}.json -- REAL SERVER...`, so
// the record modes, the recording and the replay are mockmcp's own (docs/other-languages.md). Each
// launch writes a report (docs/report.md, version 1); `check()` reads them all once the client has
// closed and throws with mockmcp's explanation of every request the cassette could not answer.
// The cassette is named as the pytest plugin names it: `<test dir>/cassettes/<test file>/<test>.yaml`.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, extname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const MODES = ["none", "once", "new_episodes", "rewrite"];
const OLD_MODES = { new: "new_episodes", all: "rewrite" }; // mockmcp 0.x's words, for one release
export const REPORT_VERSION = 1;

const FORBIDDEN = /[\x00-\x1f\x7f/\\:*?"<>|]/g;
const MAX_BYTES = 200; // a file name's room, less what a recording in progress adds to it
const SUFFIX = ".yaml";

/** The file name of a test's cassette from the names of its suites (outermost first) and itself. */
export function cassetteName(parts) {
  const whole = parts.join(".");
  let name = whole.replace(FORBIDDEN, "_");
  if (name.startsWith(".")) name = "_" + name.slice(1); // never a hidden file, never `..`
  if (Buffer.byteLength(name) + SUFFIX.length > MAX_BYTES) {
    const digest = createHash("sha1").update(whole).digest("hex").slice(0, 10);
    const room = MAX_BYTES - SUFFIX.length - digest.length - 1;
    name = new TextDecoder().decode(Buffer.from(name).subarray(0, room)).replace(/\uFFFD+$/, "") + "-" + digest;
  }
  return name + SUFFIX;
}

/** The test's name parts and file, from a name, vitest's `expect.getState()` or test context, or node:test's `t`. */
function identify(test) {
  if (typeof test === "string") return { parts: test.split(" > "), file: undefined };
  if (test && typeof test.currentTestName === "string") {
    return { parts: test.currentTestName.split(" > "), file: test.testPath };
  }
  if (test && test.task && typeof test.task.name === "string") {
    const parts = [];
    for (let task = test.task; task && task !== test.task.file; task = task.suite) parts.unshift(task.name);
    return { parts, file: test.task.file?.filepath };
  }
  if (test && typeof test.fullName === "string") {
    // node:test: `t.filePath` from Node 22.6 on; before it, `node --test` runs each file as its own process
    return { parts: test.fullName.split(" > "), file: test.filePath ?? process.argv[1] };
  }
  throw new TypeError(
    "mockmcp.server(test): give the test's name, vitest's expect.getState() or test context, or node:test's t; " +
      `got ${JSON.stringify(test)}`,
  );
}

/** Where a test's cassette is: the option, else `<test dir>/cassettes/<test file>/<test>.yaml`, else `cassettes/<test>.yaml`. */
export function cassettePath(test, options = {}) {
  if (options.cassette) return resolve(options.cassette);
  const { parts, file } = identify(test);
  const folder = file
    ? join(dirname(file), options.cassetteDir ?? "cassettes", basename(file, extname(file)))
    : resolve(options.cassetteDir ?? "cassettes");
  return join(folder, cassetteName(parts));
}

export function recordMode(options) {
  const given = options.record ?? process.env.MOCKMCP_RECORD ?? "none";
  const mode = OLD_MODES[given] ?? given;
  if (mode !== given) console.error(`mockmcp: record mode ${given} is deprecated: write ${mode}`);
  if (!MODES.includes(mode)) {
    throw new TypeError(`mockmcp: unknown record mode ${JSON.stringify(mode)}; use one of: ${MODES.join(", ")}`);
  }
  return mode;
}

export function mockmcpCommand(options) {
  const given = options.mockmcp ?? process.env.MOCKMCP ?? "mockmcp";
  return Array.isArray(given) ? given : [given];
}

function prepare(test, options, extra, server) {
  const cassette = cassettePath(test, options);
  const mode = recordMode(options);
  const reports = mkdtempSync(join(tmpdir(), "mockmcp-"));
  const [command, ...prefix] = mockmcpCommand(options);
  const args = [...prefix, "exec", "-o", cassette, "--record-mode", mode, ...extra];
  args.push("--report", join(reports, "report-{pid}.json"));
  if (options.strict) args.push("--strict");
  for (const path of options.ignore ?? []) args.push("--ignore", path);
  for (const [name, value] of Object.entries(options.substitute ?? {})) {
    args.push("--substitute", value === null || value === undefined ? name : `${name}=${value}`);
  }
  args.push("--", ...server);
  const env = Object.fromEntries(Object.entries(process.env).filter(([, value]) => typeof value === "string"));
  let verdict; // checked once, however many times it is asked (by the test and by a hook)
  const mock = { command, args, env, cassette, mode, reports, check: (wait) => (verdict ??= check(mock, options, wait)) };
  return mock;
}

function checkWhenDone(test, mock) {
  if (test && typeof test.after === "function" && typeof test.fullName === "string") {
    test.after(() => mock.check()); // node:test: a hook that throws fails its test
  } else if (test && typeof test.onTestFinished === "function") {
    test.onTestFinished(() => mock.check()); // vitest's test context
  }
  return mock;
}

/**
 * The mock server of one test: `{command, args, env}` for `StdioClientTransport`, and `check()`.
 *
 * options: `cassette` (a path), `record` (none, once, new_episodes, rewrite; default $MOCKMCP_RECORD, else none),
 * `server` (the real server's command line, to record from), `strict`, `ignore` (params paths),
 * `substitute` (`{NAME: value}`: the value recorded as `${NAME}` and put back on replay; null: $NAME's value),
 * `mockmcp` (how to run mockmcp; default $MOCKMCP, else `mockmcp` on PATH), `cassetteDir`.
 * Given node:test's `t` or vitest's test context, the check runs by itself when the test ends.
 */
export function server(test, options = {}) {
  return checkWhenDone(test, prepare(test, options, [], options.server ?? []));
}

/**
 * The mock server of one test over Streamable HTTP, started: `{url, stop(), check()}`; `check()` stops it
 * first. Its options are `server()`'s, but `server` is the real server's URL, to record from.
 */
export async function httpServer(test, options = {}) {
  const target = options.server ? ["--http-target", options.server] : [];
  const mock = prepare(test, options, ["--http", "127.0.0.1:0", ...target], []);
  Object.assign(mock, await serveHttp(mock.command, mock.args, mock.env));
  const checked = mock.check;
  mock.check = async (wait) => {
    await mock.stop();
    return checked(wait);
  };
  return checkWhenDone(test, mock);
}

/**
 * Start `command args` (a `mockmcp exec --http`) and wait until it says where it serves: `{url, child, stop()}`;
 * `stop()` ends it with SIGTERM, as a server over HTTP is stopped (it writes its report, then exits); `stdin`: the
 * child's standard input (`ignore`, or `pipe`).
 */
export async function serveHttp(command, args, env, stdin = "ignore") {
  const child = spawn(command, args, { env, stdio: [stdin, "ignore", "pipe"] });
  const exited = once(child, "exit").catch(() => [null]); // a spawn that failed says so through "error"
  let said = "";
  child.stderr.setEncoding("utf8");
  const url = await new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      said += chunk;
      const found = said.match(/http:\/\/\S+\/mcp/); // where it serves (or its recording proxy listens)
      if (found) resolve(found[0]);
    });
    child.on("error", reject);
    exited.then(([status]) => reject(new Error(`mockmcp exited with status ${status} before serving:\n${said}`)));
  });
  served().add(url); // the preload leaves a server that is mockmcp as it is
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
  };
  return { url, child, stop };
}

/** The URLs mockmcp serves in this process, shared by every copy of this module (a test runner may load its own). */
export function served() {
  return (globalThis[Symbol.for("mockmcp.served")] ??= new Set());
}

async function readReports(folder, wait) {
  const deadline = Date.now() + wait;
  for (;;) {
    const names = existsSync(folder) ? readdirSync(folder).filter((n) => /^report-\d+\.json$/.test(n)) : [];
    if (names.length || Date.now() >= deadline) {
      return names.sort().map((name) => JSON.parse(readFileSync(join(folder, name), "utf8")));
    }
    await sleep(20);
  }
}

/**
 * One miss of a report, told as this helper's user fixes it. The report's `explanation` says it for a shell
 * (`--ignore`, `mockmcp record`): its story is kept, and its fixes are said again with the options of `server()`
 * (or, `preload`, in the preload's words: the cassette and $MOCKMCP_RECORD) from the miss's facts (the path that
 * differed, the record mode that fixes it); the last fix, editing the cassette by hand, is the same everywhere.
 */
export function told(miss, preload = false) {
  const [story] = miss.explanation.split("\n  how to fix:\n");
  const fixes = [];
  const closest = (miss.closest ?? [])[0];
  if (closest?.first_path) {
    const path = closest.first_path;
    const option = preload ? "" : `ignore: [${JSON.stringify(path)}] in the test's options, or `;
    fixes.push(
      `if ${path} varies from run to run, leave it out of matching: ${option}in the cassette ` +
        `\`meta.match: {ignore: ['${path}']}\` (for one request: a rule in interactions[${closest.interaction}].match)`,
    );
  }
  const mode = OLD_MODES[miss.record] ?? miss.record;
  const why = mode === "rewrite" ? "if the host changed this request on purpose, record the cassette again" : "if the host now asks something new, record it";
  fixes.push(
    preload
      ? `${why}: run the test again with MOCKMCP_RECORD=${mode}, the real server where the host starts it`
      : `${why}: record: "${mode}" in the test's options, with the real server as server: (or MOCKMCP_RECORD=${mode} for a test that sets no record:)`,
  );
  if (miss.fixes?.length) fixes.push(miss.fixes[miss.fixes.length - 1]);
  return [story, "  how to fix:", ...fixes.map((fix, n) => `    ${n + 1}. ${fix}`)].join("\n");
}

/** What one report says is wrong, as lines (none when all is well). */
export function problems(report, strict = false) {
  if (report.version !== REPORT_VERSION) {
    return [`a report of version ${report.version}, and this helper reads version ${REPORT_VERSION}: update it`];
  }
  if (report.error) return [report.error];
  if (report.recorded) {
    const { mode, status, outcome } = report.recorded;
    return status === 0 ? [] : [`recording ${report.cassette} (record mode ${mode}) failed with status ${status}: ${outcome}`];
  }
  const out = report.misses.map(told);
  out.push(...report.mismatches.map((m) => m.explanation), ...report.withheld.map((w) => w.explanation));
  if (report.missed > report.misses.length) out.push(`mockmcp: ${report.missed - report.misses.length} more misses`);
  if (strict) {
    out.push(...report.unplayed.map((u) => `never asked for (strict): interactions[${u.interaction}] ${u.method}`));
    out.push(
      ...report.repeats.map(
        (r) => `asked more often than recorded (strict): interactions[${r.interaction}] ${r.method}, ${r.extra} more`,
      ),
    );
  }
  return out;
}

/** Read every report of this mock server (after the client closed) and throw with all that went wrong. */
async function check(mock, options, wait = 3000) {
  const found = await readReports(mock.reports, wait);
  rmSync(mock.reports, { recursive: true, force: true });
  if (!found.length) {
    throw new Error(
      `mockmcp: no report for ${mock.cassette}: the host never launched the server, or it was still running ` +
        "(close the client before the check)",
    );
  }
  const said = found.flatMap((report) => problems(report, options.strict));
  if (said.length) {
    throw new Error(`mockmcp: ${mock.cassette} could not serve this test as recorded:\n${said.join("\n")}`);
  }
  return found;
}
