import { defineConfig } from "vitest/config";

export default defineConfig({ test: { include: ["test/**/*.vitest.mjs", "examples/*.vitest.mjs"], testTimeout: 30000 } });
