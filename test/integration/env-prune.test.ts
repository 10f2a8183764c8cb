/**
 * `drydock env list` and `drydock env prune` on environment images this test builds for a
 * repository of its own (--repo keeps it to them, so nothing another test or user built is touched):
 * an old environment left behind by a changed definition goes, one a box was made from stays, a
 * dry run removes nothing, and bad flags are refused with exit 2.
 */
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const run = promisify(execFile);
const cli = join(process.cwd(), "dist", "cli", "main.js");

interface Listed {
  image: string;
  kind: string;
  repo: string | null;
  boxes: number;
}

describe("drydock env list / prune", () => {
  let repo: TempRepo;
  let root: string;
  const built: string[] = [];
  let box: string | undefined;
  const nonce = randomBytes(6).toString("hex");

  const drydock = (args: string[]) =>
    run("node", [cli, ...args], { cwd: repo.path, env: process.env }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
  const list = async () =>
    JSON.parse((await drydock(["env", "list", "--repo", ".", "--json"])).stdout) as Listed[];

  beforeAll(async () => {
    repo = tempRepo({
      "README.md": "hello\n",
      ".drydock/environment.yaml": "setup:\n  - echo one > /tmp/one\n",
    });
    root = execFileSync("git", ["rev-parse", "--show-toplevel"], { cwd: repo.path }).toString().trim();
    // Two environments of one repository: the definition changed between them.
    for (const step of ["one", "two"]) {
      // A definition of this run's own, so its images are built here, for this repository.
      repo.write(".drydock/environment.yaml", `# ${nonce}\nsetup:\n  - echo ${step} > /tmp/${step}\n`);
      repo.commit(step);
      const b = await drydock(["env", "build"]);
      expect(b).toMatchObject({ code: 0 });
      built.push(b.stdout.trim());
    }
  }, 600_000);

  afterAll(() => {
    if (box) execFileSync("docker", ["rm", "-f", box], { stdio: "ignore" });
    for (const tag of built) execFileSync("docker", ["rmi", "-f", tag], { stdio: "ignore" });
    repo?.[Symbol.dispose]();
  });

  it("lists the repository's environment images, with the boxes made from each", async () => {
    expect(built[0]).not.toBe(built[1]);
    const images = await list();
    expect(images.map((i) => i.image).sort()).toEqual([...built].sort());
    for (const i of images) expect(i).toMatchObject({ kind: "environment", repo: root, boxes: 0 });
    box = execFileSync("docker", ["create", "--label", "drydock.test=env-prune", built[1]!, "true"])
      .toString()
      .trim();
    expect((await list()).find((i) => i.image === built[1])).toMatchObject({ boxes: 1 });
    const text = await drydock(["env", "list", "--repo", "."]);
    expect(text.stdout).toMatch(/^IMAGE\s+KIND\s+AGE\s+SIZE\s+BOXES\s+REPOSITORY\n/);
    expect(text.stdout).toContain(built[0]!);
  });

  it("keeps recent images by default, and a dry run removes nothing", async () => {
    const fresh = await drydock(["env", "prune", "--repo", "."]);
    expect(fresh).toMatchObject({ code: 0 });
    expect(fresh.stdout).toMatch(/within --older-than/);
    expect(fresh.stdout).toMatch(/no environment image to remove/);
    const dry = JSON.parse(
      (await drydock(["env", "prune", "--repo", ".", "--older-than", "0", "--dry-run", "--json"])).stdout,
    ) as {
      would_remove: Listed[];
      kept: Array<Listed & { why: string }>;
    };
    expect(dry.would_remove.map((i) => i.image)).toEqual([built[0]]);
    expect(dry.kept).toMatchObject([{ image: built[1], why: "1 box made from it" }]);
    expect((await list()).length).toBe(2);
  });

  it("removes the unused one and keeps the one a box was made from", async () => {
    const pruned = await drydock(["env", "prune", "--repo", ".", "--older-than", "0"]);
    expect(pruned).toMatchObject({ code: 0 });
    expect(pruned.stdout).toMatch(/removed 1 image/);
    expect((await list()).map((i) => i.image)).toEqual([built[1]]);
    expect(execFileSync("docker", ["images", "-q", built[0]!]).toString().trim()).toBe("");
  });

  it("refuses a bad --older-than and a --repo that is not a repository, with exit 2", async () => {
    const days = await drydock(["env", "prune", "--older-than", "soon"]);
    expect(days).toMatchObject({ code: 2 });
    expect(days.stderr).toMatch(
      /--older-than: "soon" is not a number of 0 or more; write e\.g\. --older-than 7/,
    );
    const where = await drydock(["env", "list", "--repo", "/nonexistent-drydock-repo"]);
    expect(where).toMatchObject({ code: 2 });
    expect(where.stderr).toMatch(/--repo: \/nonexistent-drydock-repo is not a directory/);
  });
});
