/** `drydock doctor` where no engine answers: it says so and what to do, without sending the reader back to itself. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const cli = join(process.cwd(), "dist", "cli", "main.js");

describe("drydock doctor with no engine", () => {
  it("fails the engine check with the reason and the fix, and never says to run doctor", () => {
    const dir = mkdtempSync(join(tmpdir(), "drydock-doctor-none-"));
    try {
      const ran = spawnSync(process.execPath, [cli, "doctor"], {
        encoding: "utf8",
        env: { ...process.env, DOCKER_HOST: `unix://${join(dir, "no-engine.sock")}`, DRYDOCK_STATE_DIR: dir },
        timeout: 60_000,
      });
      const said = `${ran.stdout}\n${ran.stderr}`;
      expect(ran.status, said).not.toBe(0);
      expect(said).toMatch(/no Docker Engine answers/);
      expect(said).toMatch(/scripts\/setup\.sh/);
      expect(said).not.toMatch(/drydock doctor/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
