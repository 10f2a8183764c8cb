import { defineConfig } from "vitest/config";

// The tests against a real cluster (scripts/kube/cluster.sh up): not part of `npm test` or CI,
// which have no cluster. Run with `npx vitest run --config test/kubernetes/vitest.config.ts`.
export default defineConfig({
  test: {
    include: ["test/kubernetes/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
