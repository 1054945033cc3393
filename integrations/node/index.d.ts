// Types of index.js, for TypeScript hosts' tests.

export type RecordMode = "none" | "once" | "new_episodes" | "rewrite";

export const MODES: readonly RecordMode[];
export const REPORT_VERSION: 1;

/** A test: its name ("suite > test"), vitest's `expect.getState()` or test context, or node:test's `t`. */
export type TestIdentity =
  | string
  | { currentTestName?: string; testPath?: string }
  | { task: { name: string; suite?: unknown; file?: { filepath?: string } }; onTestFinished?(fn: () => unknown): void }
  | { fullName: string; filePath?: string; after?(fn: () => unknown): void };

export interface Options {
  /** The cassette's path; default: named after the test, as the pytest plugin names it. */
  cassette?: string;
  /** default: $MOCKMCP_RECORD, else "none" (replay only; a missing cassette fails the test). */
  record?: RecordMode;
  /** The real server's command line, launched only when recording. */
  server?: string[];
  /** Fail on interactions never asked for and requests asked more often than recorded too. */
  strict?: boolean;
  /** Params paths left out of matching (`mockmcp replay --ignore`), e.g. "arguments.when". */
  ignore?: string[];
  /** Values of this machine written as `${NAME}` when recording and put back on replay (`mockmcp exec
   * --substitute`), e.g. `{ PROJECT: process.cwd() }`; a null value: the environment variable NAME's. */
  substitute?: Record<string, string | null>;
  /** How to run mockmcp; default: $MOCKMCP, else `mockmcp` on PATH. */
  mockmcp?: string | string[];
  /** The cassette folder's name beside the test file (default "cassettes"). */
  cassetteDir?: string;
}

/** A report of docs/report.md (version 1); only the keys the helper reads are typed. */
export interface Report {
  version: 1;
  cassette: string | null;
  error?: string;
  recorded?: { mode: RecordMode; status: number; outcome: string };
  interactions?: number;
  played?: number;
  misses?: {
    method: string;
    record: string;
    explanation: string;
    closest: { interaction: number; first_path: string }[];
    fixes: string[];
  }[];
  mismatches?: { explanation: string }[];
  withheld?: { explanation: string }[];
  strict_ok?: boolean;
  [key: string]: unknown;
}

export interface MockServer {
  command: string;
  args: string[];
  env: Record<string, string>;
  cassette: string;
  mode: RecordMode;
  /** After the client closed: every launch's report; throws with mockmcp's explanations when one failed. */
  check(waitMs?: number): Promise<Report[]>;
}

export function server(test: TestIdentity, options?: Options): MockServer;

export interface HttpMockServer extends MockServer {
  /** Where it serves Streamable HTTP (or its recording proxy listens): for StreamableHTTPClientTransport. */
  url: string;
  /** SIGTERM: it writes its report, then exits. */
  stop(): Promise<void>;
}

/** The test's mock server over Streamable HTTP, started; `server` in options is the real server's URL. */
export function httpServer(
  test: TestIdentity,
  options?: Omit<Options, "server"> & { server?: string },
): Promise<HttpMockServer>;
export function cassetteName(parts: string[]): string;
export function cassettePath(test: TestIdentity, options?: Options): string;
export function problems(report: Report, strict?: boolean): string[];
/** The record mode: `options.record`, else $MOCKMCP_RECORD, else none (0.x's words said deprecated). */
export function recordMode(options: Pick<Options, "record">): RecordMode;
/** How mockmcp is run: `options.mockmcp`, else $MOCKMCP, else `mockmcp` on PATH, as a command line. */
export function mockmcpCommand(options: Pick<Options, "mockmcp">): string[];
/** Start a `mockmcp exec --http` and wait until it says where it serves. */
export function serveHttp(
  command: string,
  args: string[],
  env: Record<string, string>,
  stdin?: "ignore" | "pipe",
): Promise<{ url: string; child: import("node:child_process").ChildProcess; stop(): Promise<void> }>;
/** The URLs mockmcp serves in this process (the preload leaves them as they are). */
export function served(): Set<string>;
/** One miss of a report with its fixes in the helper's words (`preload`: in the preload's). */
export function told(miss: Record<string, unknown>, preload?: boolean): string;
