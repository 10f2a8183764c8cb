/**
 * `drydock doctor --image`: the sandbox image passes; an image made from it without git fails,
 * naming git and what breaks without it; the throwaway box is removed either way.
 */
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_OWNER, LABEL_SESSION, currentOwner, formatOwner } from "../../src/engine/labels.js";
import { checkImage } from "../../src/sandbox/image-check.js";
import { findDockerCli } from "../../src/util/docker-cli.js";
import { sandboxImage } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

async function doctor(image: string): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [cli, "doctor", "--image", image]);
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

describe("drydock doctor --image", () => {
  const withoutGit = `drydock-doctor-test:${randomBytes(4).toString("hex")}`;
  let context: string;

  beforeAll(() => {
    context = mkdtempSync(join(tmpdir(), "drydock-doctor-"));
    writeFileSync(
      join(context, "Dockerfile"),
      `FROM ${sandboxImage()}\nUSER root\nRUN rm -f /usr/bin/git\nUSER agent\n`,
    );
    execFileSync(findDockerCli(), ["build", "-q", "-t", withoutGit, context], { stdio: "pipe" });
  });

  afterAll(() => {
    execFileSync(findDockerCli(), ["rmi", "-f", withoutGit], { stdio: "pipe" });
    rmSync(context, { recursive: true, force: true });
  });

  it("passes the sandbox image", async () => {
    const { code, stdout } = await doctor(sandboxImage());
    expect(stdout).not.toContain("FAIL");
    for (const name of ["bash", "coreutils", "procps", "git", "tar", "python3", "universal-ctags", "aider"]) {
      expect(stdout).toMatch(new RegExp(`^ok   image: ${name}: `, "m"));
    }
    expect(stdout).toMatch(/^ok   image: user 1000: agent \(home \/home\/agent\)$/m);
    expect(code).toBe(0);
  });

  it("names git, what breaks without it and the fix, and exits non-zero", async () => {
    const { code, stdout } = await doctor(withoutGit);
    expect(stdout).toContain(
      "FAIL image: git: not found: git\n" +
        "     breaks: sessions cannot start (the repository's snapshot is committed in the box); session_diff, session_apply and git_diff fail\n" +
        "     fix: apt-get install git\n",
    );
    expect(stdout.match(/^FAIL/gm)).toHaveLength(1);
    expect(code).toBe(1);
  });

  it("removes its throwaway box", async () => {
    const engine = await Engine.connect();
    const results = await checkImage(engine, withoutGit);
    expect(results.filter((r) => !r.ok).map((r) => r.requirement.name)).toEqual(["git"]);
    const mine = await engine.listBoxes(LABEL_OWNER, formatOwner(currentOwner()));
    expect(mine.filter((b) => b.labels[LABEL_SESSION]?.startsWith("doctor-"))).toEqual([]);
  });
});
