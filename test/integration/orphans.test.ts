import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, inject, it, vi } from "vitest";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import { pruneOrphans } from "../../src/session/orphans.js";
import { tempRepo } from "../helpers/repos.js";
import { testEngine } from "../helpers/sessions.js";

describe("orphaned boxes", () => {
  it("are removed by prune, with their session records, after the drydock process holding them is SIGKILLed", async () => {
    using repo = tempRepo();
    // A state directory of its own: prune touches only this test's orphans, not other files'.
    const state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    vi.stubEnv("DRYDOCK_STATE_DIR", state);
    try {
      const engine = await testEngine();
      const child = spawn(
        process.execPath,
        [
          join(process.cwd(), "dist/cli/main.js"),
          "run",
          "--repo",
          repo.path,
          "--image",
          inject("sandboxImage"),
          "--no-env",
          "--",
          "sleep 600",
        ],
        // The same directory spelled with a trailing slash: still this prune's own.
        { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, DRYDOCK_STATE_DIR: `${state}/` } },
      );
      let err = "";
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      await expect.poll(() => /session (\w+) ready/.exec(err)?.[1], { timeout: 30_000 }).toBeTruthy();
      const sessionId = /session (\w+) ready/.exec(err)![1]!;
      const record = join(state, "sessions", `${sessionId}.json`);
      await expect.poll(() => existsSync(record)).toBe(true);
      expect((await engine.listBoxes(LABEL_SESSION, sessionId)).length).toBe(1);
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
      expect((await engine.listBoxes(LABEL_SESSION, sessionId)).length).toBe(1);
      const result = await pruneOrphans(engine);
      expect(result.removed).toEqual([sessionId]);
      expect((await engine.listBoxes(LABEL_SESSION, sessionId)).length).toBe(0);
      expect(existsSync(record)).toBe(false);
    } finally {
      vi.unstubAllEnvs();
      rmSync(state, { recursive: true, force: true });
    }
  });
});
