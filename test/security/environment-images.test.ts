/**
 * Environment images against a repository that attacks another, or the host: an image built from
 * one repository is never used for another's box; the files drydock reads to plan a build are
 * never read through a link, a FIFO or a device; and a repository builds only on the sandbox
 * image, its own environment images, or images the operator allowed.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EnvironmentImages } from "../../src/environment/environment-images.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine, testSession } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const SECRET = `sk-host-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
const host = mkdtempSync(join(tmpdir(), "drydock-host-"));
/** Top directories of the repositories these tests made: their images are removed after. */
const roots = new Set<string>();

function repoFor(files: Record<string, string>): TempRepo {
  const repo = tempRepo(files);
  roots.add(realpathSync(repo.path));
  return repo;
}

afterAll(async () => {
  rmSync(host, { recursive: true, force: true });
  const engine = await testEngine();
  for (const image of await engine.listImages("drydock.env.repo")) {
    if (!roots.has(image.labels["drydock.env.repo"] ?? "")) continue;
    for (const tag of image.tags) await engine.removeImage(tag);
    if (image.tags.length === 0) await engine.removeImage(image.id);
  }
});

async function environments(allowBaseImages?: string[]): Promise<EnvironmentImages> {
  return new EnvironmentImages(await testEngine(), { baseImage: sandboxImage(), allowBaseImages });
}

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs the CLI, killed after `timeoutMs` (a read that never ends must not hang the suite). */
function drydock(args: string[], timeoutMs = 120_000): Promise<Ran> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    }),
  );
}

describe("one repository's environment image is never another's", () => {
  it("two repositories with the same definition and key files get one image each; one repository keeps one image across edits; one commit has one image wherever it is", async () => {
    // The same definition and key files; setup copies a file that is not a key file, as a
    // repository's `conftest.py` or a fake `pytest` in /opt/venv/bin would be.
    const same = {
      ".drydock/environment.yaml": "setup:\n  - mkdir -p /opt/venv/bin && cp payload /opt/venv/bin/owner\n",
      "requirements.txt": "# nothing\n",
    };
    using a = repoFor({ ...same, payload: "repository-a\n" });
    using b = repoFor({ ...same, payload: "repository-b\n" });
    const envs = await environments();
    const builds: Array<{ what: string; built: boolean; image: string; ms: number }> = [];
    const ask = async (what: string, repo: string, ref?: string) => {
      const started = Date.now();
      const status = await envs.imageFor({ repo, ref });
      builds.push({ what, built: status.built === true, image: status.image, ms: Date.now() - started });
      return status;
    };
    const first = await ask("a", a.path);
    writeFileSync(join(a.path, "README.md"), "a file that is not a key file\n");
    const second = await ask("a after an edit", a.path);
    const other = await ask("b", b.path);
    expect(second.image).toBe(first.image);
    expect(other.image).not.toBe(first.image);
    expect(builds.map((x) => x.built)).toEqual([true, false, true]);
    // What b's box holds is what b's setup made.
    await using box = await testSession(b.path, { image: other.image });
    expect((await box.bash("cat /opt/venv/bin/owner", {})).output.trim()).toBe("repository-b");
    const labels = (await (await testEngine()).imageInfo(other.image))?.labels ?? {};
    expect(labels["drydock.env.repo-id"]).toMatch(/^[0-9a-f]{32}$/);

    // Eval: tasks at one commit share one image, in the repository and in a clone of it.
    const commit = git(a.path, "rev-parse", "HEAD").trim();
    const clone = mkdtempSync(join(tmpdir(), "drydock-clone-"));
    roots.add(realpathSync(clone));
    try {
      git(clone, "clone", "-q", a.path, ".");
      const task1 = await ask("a at its commit", a.path, commit);
      const task2 = await ask("a's clone at the same commit", clone, commit);
      expect(task2.image).toBe(task1.image);
      expect(builds.slice(3).map((x) => x.built)).toEqual([true, false]);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
    process.stderr.write(
      `environment builds: ${builds.map((x) => `${x.what}: ${x.built ? "built" : "cached"} in ${x.ms} ms`).join("; ")}\n`,
    );
  });
});

describe("a tag is not trusted by itself", () => {
  it("an image under an environment's tag that another key made (a tag holds only 48 bits) is not taken for it", async () => {
    using repo = repoFor({ ".drydock/environment.yaml": 'setup: ["true"]\n' });
    const envs = await environments();
    const planned = await envs.status(repo.path);
    expect(planned.present).toBe(false);
    // Another image under the very tag, as a repository that ground its definition to match would make.
    const engine = await testEngine();
    await engine.tag(sandboxImage(), planned.image);
    try {
      expect((await (await environments()).status(repo.path)).present).toBe(false);
    } finally {
      await engine.removeImage(planned.image);
    }
  });
});

describe("environment files are never read through a link, a FIFO or a device", () => {
  it("an environment.yaml linked to a host file is refused, and the file's values reach neither the output nor the box", async () => {
    writeFileSync(join(host, "leak.yaml"), `env:\n  LEAKED: ${SECRET}\n`);
    using repo = repoFor({ "README.md": "x\n" });
    repo.write(".drydock/.keep", "");
    symlinkSync(join(host, "leak.yaml"), join(repo.path, ".drydock/environment.yaml"));
    repo.commit("a linked definition");
    const ran = await drydock([
      "run",
      "--repo",
      repo.path,
      "--image",
      sandboxImage(),
      "--no-diff",
      "--",
      "env",
    ]);
    // Any case: the builder upper-cases what it quotes.
    expect(ran.output.toLowerCase()).not.toContain(SECRET.toLowerCase());
    expect(ran.code).not.toBe(0);
    expect(ran.output).toContain(".drydock/environment.yaml: is a symbolic link, not a regular file");
  });

  it("a Dockerfile linked to a host .env is refused before any build, and no key is printed", async () => {
    writeFileSync(join(host, ".env"), `OPENAI_API_KEY=${SECRET}\n`);
    using repo = repoFor({ ".devcontainer/devcontainer.json": '{"build": {"dockerfile": "Dockerfile"}}' });
    symlinkSync(join(host, ".env"), join(repo.path, ".devcontainer/Dockerfile"));
    repo.commit("a linked Dockerfile");
    const ran = await drydock(["env", "build", "--repo", repo.path, "--image", sandboxImage()]);
    // Any case: the builder upper-cases what it quotes.
    expect(ran.output.toLowerCase()).not.toContain(SECRET.toLowerCase());
    expect(ran.code).not.toBe(0);
    expect(ran.output).toContain(".devcontainer/Dockerfile: is a symbolic link, not a regular file");
  });

  it("key files linked to a FIFO and to /dev/zero are keyed by the link, never opened: `env show` answers at once", async () => {
    const fifo = join(host, "fifo");
    await new Promise((resolve) => spawn("mkfifo", [fifo]).on("close", resolve));
    using repo = repoFor({ ".drydock/environment.yaml": 'setup: ["true"]\n' });
    symlinkSync(fifo, join(repo.path, "requirements.txt"));
    symlinkSync("/dev/zero", join(repo.path, "package.json"));
    const ran = await drydock(["env", "show", "--repo", repo.path, "--image", sandboxImage()], 30_000);
    expect(ran.signal, "env show did not finish within 30 s").toBeNull();
    expect(ran.code, ran.output).toBe(0);
    expect(ran.output).toMatch(/keyed by: .*package\.json, requirements\.txt/);
  });

  it("a devcontainer.json linked to /dev/zero is refused by name, not read", async () => {
    using repo = repoFor({ "README.md": "x\n" });
    symlinkSync("/dev/zero", join(repo.path, ".devcontainer.json"));
    const ran = await drydock(["env", "show", "--repo", repo.path, "--image", sandboxImage()], 30_000);
    expect(ran.signal).toBeNull();
    expect(ran.code).not.toBe(0);
    expect(ran.output).toContain(".devcontainer.json: is a symbolic link, not a regular file");
  });
});

describe("a repository builds only on images it may read", () => {
  it("refuses another repository's images as a devcontainer image, a FROM or a COPY --from, unless the operator allows one", async () => {
    using a = repoFor({
      ".devcontainer/devcontainer.json": '{"build": {"dockerfile": "Dockerfile"}}',
      ".devcontainer/Dockerfile":
        "ARG DRYDOCK_SANDBOX\nFROM ${DRYDOCK_SANDBOX}\nCOPY private.txt /opt/private.txt\n",
      ".devcontainer/private.txt": "a's build context\n",
    });
    const envs = await environments();
    const built = await envs.imageFor({ repo: a.path });
    const aBase = `drydock-env-base:${built.plan!.hash}`;
    const refusal = async (repo: TempRepo, allow?: string[]) =>
      (await environments(allow)).status(repo.path).then(
        () => "accepted",
        (error: unknown) => (error as Error).message,
      );

    using byImage = repoFor({ ".devcontainer/devcontainer.json": JSON.stringify({ image: aBase }) });
    expect(await refusal(byImage)).toMatch(
      /\.devcontainer\/devcontainer\.json:\d+: image drydock-env-base:\w+ is not an image this repository may build on/,
    );
    using byFrom = repoFor({
      ".devcontainer/devcontainer.json": '{"build": {"dockerfile": "Dockerfile"}}',
      ".devcontainer/Dockerfile": `ARG OTHER=${aBase}\nFROM \${OTHER}\n`,
    });
    expect(await refusal(byFrom)).toMatch(
      /\.devcontainer\/Dockerfile:2: FROM drydock-env-base:\w+ is not an image/,
    );
    using byCopy = repoFor({
      ".devcontainer/devcontainer.json": '{"build": {"dockerfile": "Dockerfile"}}',
      ".devcontainer/Dockerfile": `ARG DRYDOCK_SANDBOX\nFROM \${DRYDOCK_SANDBOX}\nCOPY --from=${built.image} /opt /stolen\n`,
    });
    expect(await refusal(byCopy)).toMatch(
      /\.devcontainer\/Dockerfile:3: COPY --from drydock-env:\w+ is not an image/,
    );

    // A registry-wide allowance covers the name (drydock-env-base is docker.io/library/drydock-env-base)
    // but never another repository's environment image under it.
    expect(await refusal(byImage, ["docker.io/*"])).toMatch(/is not an image this repository may build on/);
    expect(await refusal(byCopy, ["docker.io/library/*"])).toMatch(
      /COPY --from drydock-env:\w+ is not an image/,
    );

    // The operator's allowance relaxes it for the image named, and the repository's own images are its own.
    expect(await refusal(byImage, [aBase])).toBe("accepted");
    a.write(".devcontainer/devcontainer.json", JSON.stringify({ image: built.image }));
    expect(await refusal(a)).toBe("accepted");
  });
});
