/**
 * `sessions prune --all` beside other state directories' boxes, and the widest prune,
 * `--every-state-dir` (with and without `--live`), run only against a Docker
 * Engine of the test's own (a private dockerd): on the shared engine it would reach other
 * drydocks' boxes, which is exactly what it is for. Its boxes are stopped containers of an empty
 * image, labelled as drydocks of several state directories would label them.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentOwner, formatOwner } from "../../src/engine/labels.js";
import { PrivateEngine } from "../helpers/private-engine.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

describe("sessions prune --every-state-dir, on an engine of the test's own", () => {
  let engine: PrivateEngine;
  const root = mkdtempSync(join(tmpdir(), "drydock-prune-every-"));
  const here = join(root, "here");

  beforeAll(async () => {
    engine = await PrivateEngine.start();
    // An image with nothing in it: a box is only ever created here, never started.
    engine.docker(["import", "-", "drydock-test-empty"], Buffer.alloc(1024));
  });

  afterAll(async () => {
    await engine?.[Symbol.asyncDispose]();
    rmSync(root, { recursive: true, force: true });
  });

  const box = (session: string, state: string, owner?: string): string => {
    const labels = [`drydock.session=${session}`, `drydock.state=${state}`];
    if (owner) labels.push(`drydock.owner=${owner}`);
    return engine
      .docker(["create", ...labels.flatMap((l) => ["--label", l]), "drydock-test-empty", "true"])
      .trim();
  };
  const left = () => engine.docker(["ps", "-aq", "--no-trunc"]).split("\n").filter(Boolean);

  const prune = (...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> => {
    const child = spawn(process.execPath, [cli, "sessions", "prune", ...args], {
      env: { ...process.env, DOCKER_HOST: engine.host, DRYDOCK_STATE_DIR: here },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  };

  it("--all keeps other state directories' and live owners' boxes; --every-state-dir removes orphans everywhere once confirmed, live owners' boxes only with --live", async () => {
    const live = formatOwner(currentOwner());
    const mine = box("aaaaaaaaaaaa", here);
    const theirs = box("bbbbbbbbbbbb", join(root, "other"));
    const theirsLive = box("cccccccccccc", join(root, "other"), live);
    const mineLive = box("dddddddddddd", here, live);

    // --all stays within this state directory and leaves a live owner's box.
    const all = await prune("--all");
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain(
      `  removed aaaaaaaaaaaa (box ${mine.slice(0, 12)}, this state directory, owner gone)`,
    );
    expect(left().sort()).toEqual([theirs, theirsLive, mineLive].sort());

    const refused = await prune("--every-state-dir");
    expect(refused.code).toBe(2);
    expect(left().sort()).toEqual([theirs, theirsLive, mineLive].sort());

    const again = box("aaaaaaaaaaaa", here);
    const orphans = await prune("--every-state-dir", "--yes");
    expect(orphans.code, orphans.stderr).toBe(0);
    expect(orphans.stdout).toContain(
      `  removed bbbbbbbbbbbb (box ${theirs.slice(0, 12)}, state directory ${join(root, "other")}, owner gone)`,
    );
    expect(orphans.stdout).toContain(
      `  removed aaaaaaaaaaaa (box ${again.slice(0, 12)}, this state directory, owner gone)`,
    );
    expect(left().sort()).toEqual([theirsLive, mineLive].sort());

    const everything = await prune("--every-state-dir", "--live", "--yes");
    expect(everything.code, everything.stderr).toBe(0);
    expect(everything.stdout).toMatch(/^removed 2 box\(es\): .*; kept 0\n/);
    expect(left()).toEqual([]);
  });
});
