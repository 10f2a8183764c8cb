import { defineConfig } from "vitest/config";

// Two projects, both run by `npm test` and in CI: unit tests need no Docker; integration tests
// start real containers and fail (never skip) with a fix hint when no engine answers.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          sequence: { groupOrder: 0 },
          include: ["test/unit/**/*.test.ts"],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "integration",
          sequence: { groupOrder: 1 },
          include: ["test/integration/**/*.test.ts", "test/security/**/*.test.ts", "test/faults/**/*.test.ts"],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          globalSetup: ["test/helpers/global-setup.ts"],
          // Servers the tests start keep no warm boxes unless a test asks (--pool): on two cores,
          // idle pools in every spawned server only slow the rest down. The pool has its own tests.
          env: { DRYDOCK_POOL: process.env.DRYDOCK_POOL ?? "0" },
          // Boxes are real containers on a 2-core machine: a few files at a time.
          maxWorkers: 2,
          fileParallelism: true,
        },
      },
    ],
  },
});
