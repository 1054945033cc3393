// The helper's tests and examples, and the preload's: every worker (forks or threads) starts with
// `--import @mockmcp/node/register`, which leaves the helper's servers (mockmcp itself) as they are.
import { defineConfig } from "vitest/config";

process.env.MOCKMCP_CASSETTES ??= "examples/cassettes/preload"; // the preload's cassettes, one per server
const preload = { execArgv: ["--import", "@mockmcp/node/register"] };

export default defineConfig({
  test: {
    include: ["test/*.vitest.mjs", "examples/*.vitest.mjs", "test/preload/*.vitest.mjs", "examples/preload/*.vitest.mjs"],
    testTimeout: 30000,
    poolOptions: { forks: preload, threads: preload },
  },
});
