/**
 * Environment images at a commit, against a repository that makes a commit id stand for other
 * files: a replace ref for another repository's commit, or an object file whose bytes are not its
 * name's. Images at a commit are shared by every clone (eval tasks at one commit share one), so a
 * repository that could build the image for a commit id with files of its own would hand a
 * planted `conftest.py` or `pytest` to every other repository's sessions and grading at that
 * commit. The image must hold the commit's own files, or the build must be refused.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { EnvironmentImages } from "../../src/environment/environment-images.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine, testSession } from "../helpers/sessions.js";

const scratch = mkdtempSync(join(tmpdir(), "drydock-git-objects-"));
/** Top directories of the repositories these tests made: their images are removed after. */
const roots = new Set<string>();

afterAll(async () => {
  const engine = await testEngine();
  for (const image of await engine.listImages("drydock.env.repo")) {
    if (!roots.has(image.labels["drydock.env.repo"] ?? "")) continue;
    for (const tag of image.tags) await engine.removeImage(tag).catch(() => undefined);
    if (image.tags.length === 0) await engine.removeImage(image.id).catch(() => undefined);
  }
  rmSync(scratch, { recursive: true, force: true });
});

/** A definition whose setup copies a file that is not a key file into the image, as a conftest.py would be. */
const DEFINITION = {
  ".drydock/environment.yaml": "setup:\n  - mkdir -p /opt/venv/bin && cp payload /opt/venv/bin/owner\n",
};

/** Each victim's tree is its own (an image of an equal tree would be taken as it is, rightly). */
let victims = 0;
function victimRepo(): TempRepo {
  const repo = tempRepo({
    ...DEFINITION,
    payload: "the victim's own\n",
    unique: `${process.pid}-${++victims}-${Date.now()}\n`,
  });
  roots.add(realpathSync(repo.path));
  return repo;
}

/** A clone of `victim` with a commit of its own. */
function attackerClone(victim: string, payload: string): { path: string; planted: string } {
  const path = mkdtempSync(join(scratch, "attacker-"));
  git(path, "clone", "-q", victim, ".");
  git(path, "config", "user.name", "attacker");
  git(path, "config", "user.email", "attacker@example.com");
  writeFileSync(join(path, "payload"), payload);
  git(path, "commit", "-qam", "planted");
  roots.add(realpathSync(path));
  return { path, planted: git(path, "rev-parse", "HEAD").trim() };
}

async function envs(): Promise<EnvironmentImages> {
  return new EnvironmentImages(await testEngine(), { baseImage: sandboxImage() });
}

async function ownerIn(image: string, repo: string): Promise<string> {
  await using box = await testSession(repo, { image });
  return (await box.bash("cat /opt/venv/bin/owner", {})).output.trim();
}

describe("an environment image at a commit holds that commit's files, whatever the repository that asks", () => {
  it("a replace ref for another repository's commit builds nothing of its own for that commit", async () => {
    using victim = victimRepo();
    const commit = git(victim.path, "rev-parse", "HEAD").trim();
    const attacker = attackerClone(victim.path, "planted by the attacker\n");
    git(attacker.path, "update-ref", `refs/replace/${commit}`, attacker.planted);
    // The attack is real: git, by default, shows the planted payload for the victim's commit.
    expect(git(attacker.path, "show", `${commit}:payload`)).toContain("planted");

    const images = await envs();
    const asked = await images.imageFor({ repo: attacker.path, ref: commit });
    const victims = await images.imageFor({ repo: victim.path, ref: commit });
    // Whichever image each gets, both hold the commit's own file.
    expect(await ownerIn(victims.image, victim.path)).toBe("the victim's own");
    expect(await ownerIn(asked.image, victim.path)).toBe("the victim's own");
  });

  it("a replace ref alone (the commit is not in the repository) is refused as naming no commit", async () => {
    using victim = victimRepo();
    const commit = git(victim.path, "rev-parse", "HEAD").trim();
    const unrelated = tempRepo({ ...DEFINITION, payload: "planted by the attacker\n" });
    roots.add(realpathSync(unrelated.path));
    try {
      git(
        unrelated.path,
        "update-ref",
        `refs/replace/${commit}`,
        git(unrelated.path, "rev-parse", "HEAD").trim(),
      );
      await expect((await envs()).imageFor({ repo: unrelated.path, ref: commit })).rejects.toThrow(
        /names no commit/,
      );
    } finally {
      unrelated[Symbol.dispose]();
    }
  });

  it("an object file whose bytes are not its name's is refused before any build", async () => {
    using victim = victimRepo();
    const commit = git(victim.path, "rev-parse", "HEAD").trim();
    const attacker = attackerClone(victim.path, "unused\n");
    const blob = git(attacker.path, "rev-parse", `${commit}:payload`).trim();
    // The clone's copy of the payload blob, as a loose object holding other bytes under its name.
    execFileSync("sh", ["-c", `git unpack-objects -q < $(ls .git/objects/pack/*.pack) || true`], {
      cwd: attacker.path,
    });
    for (const pack of execFileSync("sh", ["-c", "ls .git/objects/pack/ 2>/dev/null || true"], {
      cwd: attacker.path,
      encoding: "utf8",
    })
      .split("\n")
      .filter(Boolean)) {
      rmSync(join(attacker.path, ".git/objects/pack", pack));
    }
    const other = Buffer.from("planted by the attacker\n");
    const path = join(attacker.path, ".git", "objects", blob.slice(0, 2), blob.slice(2));
    rmSync(path, { force: true });
    writeFileSync(path, deflateSync(Buffer.concat([Buffer.from(`blob ${other.length}\0`), other])));
    expect(git(attacker.path, "cat-file", "blob", blob)).toContain("planted");

    const images = await envs();
    await expect(images.imageFor({ repo: attacker.path, ref: commit })).rejects.toThrow(/not that object's/);
    const victims = await images.imageFor({ repo: victim.path, ref: commit });
    expect(await ownerIn(victims.image, victim.path)).toBe("the victim's own");
  });
});
