import { defineConfig } from "vitest/config";

// The tests against a real cluster (scripts/kube/cluster.sh up): not part of `npm test` or CI,
// which have no cluster. Run with `npx vitest run --config test/kubernetes/vitest.config.ts`.
export default defineConfig({
  test: {
    include: ["test/kubernetes/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    // The exec tests measure what the host keeps while 50 MB go through: garbage collected first.
    execArgv: ["--expose-gc"],
  },
});
