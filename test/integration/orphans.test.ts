import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import { pruneOrphans } from "../../src/session/orphans.js";
import { tempRepo } from "../helpers/repos.js";
import { testEngine } from "../helpers/sessions.js";

describe("orphaned boxes", () => {
  it("are removed by prune after the drydock process holding them is SIGKILLed", async () => {
    using repo = tempRepo();
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
        "--",
        "sleep 600",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    await expect.poll(() => /session (\w+) ready/.exec(err)?.[1], { timeout: 30_000 }).toBeTruthy();
    const sessionId = /session (\w+) ready/.exec(err)![1]!;
    expect((await engine.listBoxes(LABEL_SESSION, sessionId)).length).toBe(1);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    expect((await engine.listBoxes(LABEL_SESSION, sessionId)).length).toBe(1);
    const result = await pruneOrphans(engine);
    expect(result.removed).toContain(sessionId);
    expect((await engine.listBoxes(LABEL_SESSION, sessionId)).length).toBe(0);
  });
});
