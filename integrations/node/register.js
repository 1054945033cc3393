// mockmcp's Node preload: `node --import @mockmcp/node/register` (or NODE_OPTIONS="--import @mockmcp/node/register")
// runs a TypeScript host's tests unchanged, every MCP server its SDK client starts over stdio replayed from a
// cassette, or recorded into one, as $MOCKMCP_RECORD says (none, the default: replay; once; new_episodes; rewrite).
//
// Theory of operation. ESM bindings cannot be reassigned from a preload, so the SDK's `StdioClientTransport` is
// left as it is and the spawn underneath it is patched: `child_process.spawn`, which the SDK reaches through
// cross-spawn, is wrapped (and Node's ESM view of `node:child_process` synced), and a spawn whose caller is the
// SDK's stdio transport becomes `mockmcp exec --cassettes DIR -- SERVER ARGS...`: mockmcp names the cassette
// after the server as its Python interception does, and records or replays it. Every other spawn is untouched.
// The preload runs in each process and worker thread that Node starts with it (vitest's forks and threads pools,
// node:test's files), each patching its own `child_process`.
//
// Over Streamable HTTP, `fetch` (which the SDK's transport calls) is wrapped: an MCP request goes to a
// `mockmcp exec --http --http-target URL` started for its URL, which replays or records it.
//
// The verdict: a request the cassette cannot answer over stdio gets mockmcp's error, whose message this preload
// completes with the closest recording's differences, so the test that made it fails saying why; each launch's
// report is read when its server exits, and what went wrong is said on stderr and makes the process exit with
// status 1.

import childProcess from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { PassThrough } from "node:stream";

import { mockmcpCommand, problems, recordMode, served, serveHttp, told } from "./index.js";

const NO_MATCH = -32099; // mockmcp's error for a request no recording answers
const SDK_STDIO = /[\\/]@modelcontextprotocol[\\/][^\\/]+[\\/](?:dist|src)[\\/](?:.*[\\/])?stdio\.[cm]?[jt]s:/; // a source map may say src/*.ts

const original = childProcess.spawn;
let reports; // this process's reports folder, made at its first intercepted launch
const said = [];

/** `mockmcp exec`'s options for one launch: the cassettes, the host's folder, the record mode, the report. */
function execOptions() {
  reports ??= mkdtempSync(join(tmpdir(), "mockmcp-preload-"));
  // read at each launch, not at start-up: a runner may set the environment after the preload ran
  const folder = resolve(process.env.MOCKMCP_CASSETTES || "cassettes");
  const options = ["exec", "--cassettes", folder, "--project", process.cwd(), "--record-mode", recordMode({})];
  return [...options, "--report", join(reports, "report-{pid}.json")];
}

/** Whether this spawn is the SDK's stdio transport starting its server (and not anything else the test runs). */
function fromSdk() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = limit;
  return SDK_STDIO.test(stack);
}

function spawn(command, args, options) {
  const [mockmcp, ...prefix] = mockmcpCommand({});
  if (command === mockmcp || basename(String(command)) === "mockmcp" || !fromSdk()) {
    return original.apply(this, arguments); // not the SDK's, or a server that is mockmcp already (the helper's)
  }
  if (!Array.isArray(args)) [args, options] = [[], args];
  const exec = [...prefix, ...execOptions(), "--", command, ...args];
  // the SDK gives its server a few safe variables only; mockmcp also needs its own, and Python's
  const own = Object.entries(process.env).filter(([name]) => /^(MOCKMCP|PYTHON|VIRTUAL_ENV)/.test(name));
  const env = { ...Object.fromEntries(own), ...(options?.env ?? process.env) };
  const child = original.call(this, mockmcp, exec, { ...options, env });
  explained(child);
  child.on("exit", judge);
  return child;
}

/** The server's stdout as the SDK reads it: a miss's error says, in its message, how it differed from the cassette. */
function explained(child) {
  if (!child.stdout) return;
  const out = new PassThrough();
  let kept = "";
  child.stdout.on("data", (chunk) => {
    const lines = (kept + chunk.toString("utf8")).split("\n");
    kept = lines.pop();
    for (const line of lines) out.write(completed(line) + "\n");
  });
  child.stdout.on("end", () => out.end(kept));
  child.stdout.on("error", (error) => out.destroy(error));
  child.stdout = out;
  if (child.stdio) child.stdio[1] = out;
}

function completed(line) {
  if (!line.includes(String(NO_MATCH))) return line;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return line;
  }
  const error = message?.error;
  if (error?.code !== NO_MATCH || !error.data?.differences) return line;
  const closest = error.data.closest ? ` (closest recorded: ${error.data.closest} of the cassette)` : "";
  const differences = error.data.differences.map((difference) => `\n  - ${difference}`).join("");
  const fix = `\n  if the host changed this request on purpose, record it again: MOCKMCP_RECORD=rewrite`;
  error.message = `${error.message}${closest}${differences}${fix}`;
  return JSON.stringify(message);
}

/** Read the reports written so far (each launch's, when it exits) and say what went wrong, once each. */
function judge() {
  if (!reports) return;
  for (const name of readdirSync(reports).filter((n) => /^report-\d+\.json$/.test(n))) {
    const path = join(reports, name);
    let report;
    try {
      report = JSON.parse(readFileSync(path, "utf8"));
    } catch {
      continue; // not written whole yet: read at the next exit
    }
    rmSync(path, { force: true });
    const found = report.error || report.recorded ? problems(report) : explanations(report);
    if (found.length) {
      const text = `mockmcp: ${report.cassette} could not serve the host as recorded:\n${found.join("\n")}`;
      said.push(text);
      console.error(text);
    }
  }
}

/** A replay's report said in the preload's words: each miss's story, its fixes as the preload's user makes them. */
function explanations(report) {
  const misses = report.misses.map((miss) => told(miss, true));
  return [...misses, ...[...report.mismatches, ...report.withheld].map((each) => each.explanation)];
}

// --- Streamable HTTP: `fetch`, which the SDK's StreamableHTTPClientTransport calls (unless given its own) ---

const originalFetch = globalThis.fetch;
const servers = new Map(); // a server's URL (without query) -> its mockmcp exec --http, started
// A test runner may end its worker without an exit event (vitest's pools do): the server is started beneath a
// shell that holds a pipe from this process, and stops it (SIGTERM: it writes its cassette and report) when the
// pipe closes, which it does however this process ends.
const WATCHDOG = '"$@" & server=$!; cat > /dev/null; kill -TERM "$server"; wait "$server"';
const running = new Set(); // those started and not ended

// A process that ends by running out of work (a program, node:test's file) waits for its servers to write their
// cassettes and reports, and reads them.
process.on("beforeExit", () => {
  for (const child of running) {
    child.ref(); // kept alive until it has ended
    child.stdin.end();
  }
});

/** Whether a request is MCP's: a POST accepting both JSON and SSE, or one carrying MCP's session or revision header. */
function isMcp(method, headers) {
  if (headers.has("mcp-session-id") || headers.has("mcp-protocol-version")) return true;
  const accept = headers.get("accept") ?? "";
  return method === "POST" && accept.includes("application/json") && accept.includes("text/event-stream");
}

async function fetchThrough(input, init) {
  const request = input instanceof Request ? input : undefined;
  const url = new URL(request ? request.url : String(input));
  const method = (init?.method ?? request?.method ?? "GET").toUpperCase();
  const headers = new Headers(init?.headers ?? request?.headers);
  const target = url.origin + url.pathname;
  if (!/^https?:$/.test(url.protocol) || served().has(target) || !isMcp(method, headers)) {
    return originalFetch(input, init);
  }
  const mock = await serverFor(target);
  return originalFetch(request ? new Request(mock.url, request) : mock.url, init);
}

/** The mockmcp exec that replays (or records, through its proxy) the server at `target`, started once. */
function serverFor(target) {
  let started = servers.get(target);
  if (!started) {
    const [mockmcp, ...prefix] = mockmcpCommand({});
    const args = [mockmcp, ...prefix, ...execOptions(), "--http", "127.0.0.1:0", "--http-target", target];
    started = serveHttp("sh", ["-c", WATCHDOG, "sh", ...args], { ...process.env }, "pipe");
    servers.set(target, started);
    started.then(({ child }) => {
      for (const handle of [child, child.stdin, child.stderr]) handle.unref?.(); // it lives as long as the host
      running.add(child);
      child.on("exit", () => running.delete(child) && judge());
    }, () => servers.delete(target)); // said to the host by the fetch that failed; tried again next time
  }
  return started;
}

childProcess.spawn = spawn;
syncBuiltinESMExports();
if (originalFetch) globalThis.fetch = fetchThrough;

process.on("exit", () => {
  judge();
  if (reports) rmSync(reports, { recursive: true, force: true });
  if (said.length && !process.exitCode) process.exitCode = 1;
});
