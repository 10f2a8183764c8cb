/**
 * `drydock doctor` says how many more sessions fit on the engine's host now and why: the memory
 * drydock's boxes use, the host's memory and the reserve, and what a new session counts.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

describe("drydock doctor: sessions", () => {
  it("counts the boxes running now, this test's among them, and says how many more fit", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    expect((await session.bash("true")).exitCode).toBe(0);
    const { stdout } = await promisify(execFile)(process.execPath, [cli, "doctor", "--json"]);
    const checks = JSON.parse(stdout) as Array<{ name: string; ok: boolean; detail: string }>;
    const sessions = checks.find((c) => c.name === "sessions");
    expect(sessions?.ok, stdout).toBe(true);
    const m =
      /^(\d+) more sessions? fit: the boxes of every drydock on this engine \((\d+)\) use [\d,]+ MiB of the [\d,]+ MiB sessions may use \([\d,]+ MiB of host memory less a [\d,]+ MiB reserve, --memory-reserve-mb; .*\), and a new session counts 69 MiB until its box is measured$/.exec(
        sessions!.detail,
      );
    expect(m, sessions!.detail).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThan(0);
    expect(Number(m![2])).toBeGreaterThanOrEqual(1);
  });
});
