/**
 * Images from a registry, against the real engine and registries this test starts on 127.0.0.1
 * (Debian's docker-registry; one open, one behind htpasswd, sharing one storage). Every image is
 * made here from what the engine holds, pushed, then removed from the engine, so each pull is a
 * real one: a devcontainer `image` and a Dockerfile FROM the operator allowed are pulled and the
 * box runs on them, an eval task's `image` is pulled and its digest recorded, and `--pull never`,
 * an image nobody allowed, an image that lacks what a box needs and a registry without
 * credentials are each refused with the fix. Credentials come from a DOCKER_CONFIG the test
 * writes, and appear in no box, label or log.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { BASE_DIGESTS_LABEL, EnvironmentImages } from "../../src/environment/environment-images.js";
import type { ResultsFile } from "../../src/eval/results-summary.js";
import { LoopbackRegistry } from "../helpers/loopback-registry.js";
import { markedImage, pushAndForget, slimBoxImage, tinyImageWithoutGit } from "../helpers/registry-images.js";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const run = randomBytes(4).toString("hex");
const USER = "puller";
const PASSWORD = `pw-${randomBytes(9).toString("hex")}`;
const BASIC = Buffer.from(`${USER}:${PASSWORD}`).toString("base64");

let engine: Engine;
let open: LoopbackRegistry;
let locked: LoopbackRegistry;
let state: string;
let configDir: string;
/** The slim box image with a marker layer, in the registries (not in the engine). */
let boxPath: string;
let nogitPath: string;
const marker = `registry-box-${run}`;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function drydock(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const child = spawn(process.execPath, [cli, ...args], {
    env: { ...process.env, DRYDOCK_STATE_DIR: state, DOCKER_CONFIG: join(state, "no-docker-config"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** Every file under a directory, read as text (the state directory's logs and records). */
function allText(dir: string): string {
  let text = "";
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const info = statSync(path);
    if (info.isDirectory()) text += allText(path);
    else if (info.isFile() && info.size < 50_000_000) text += readFileSync(path, "latin1");
  }
  return text;
}

async function forget(...refs: string[]): Promise<void> {
  for (const ref of refs) await engine.removeImage(ref).catch(() => undefined);
}

beforeAll(async () => {
  engine = await testEngine();
  state = mkdtempSync(join(tmpdir(), "drydock-registry-state-"));
  open = await LoopbackRegistry.start();
  locked = await LoopbackRegistry.start({
    htpasswd: { user: USER, password: PASSWORD },
    storage: open.storage,
  });
  configDir = join(state, "docker-config");
  mkdirSync(configDir);
  writeFileSync(
    join(configDir, "config.json"),
    JSON.stringify({ auths: { [locked.address]: { auth: BASIC } } }),
  );
  const slim = await slimBoxImage(engine, sandboxImage());
  boxPath = `drydock-test/box:${run}`;
  nogitPath = `drydock-test/nogit:${run}`;
  await markedImage(engine, slim, `${open.address}/${boxPath}`, marker);
  await pushAndForget(engine, `${open.address}/${boxPath}`, { serveraddress: open.address });
  await tinyImageWithoutGit(engine, `${open.address}/${nogitPath}`);
  await pushAndForget(engine, `${open.address}/${nogitPath}`, { serveraddress: open.address });
}, 600_000);

afterAll(async () => {
  // What a failing test left: every tag under the test's registries.
  const prefixes = [open, locked].filter((r) => r !== undefined).map((r) => `${r.address}/`);
  for (const image of engine ? await engine.docker.listImages() : []) {
    for (const tag of image.RepoTags ?? []) if (prefixes.some((p) => tag.startsWith(p))) await forget(tag);
  }
  await open?.[Symbol.asyncDispose]();
  await locked?.[Symbol.asyncDispose]();
  if (state) rmSync(state, { recursive: true, force: true });
});

const CHECK_MARKER = (expected: string) =>
  `set -e\ntest "$(cat /etc/drydock-marker)" = "${expected}"\ngit --version\necho "tests passed on ${expected}"\n`;

describe("images from a registry", () => {
  it("a devcontainer image the operator allowed is pulled, with progress, and the box runs the project's tests on it", async () => {
    const ref = `${open.address}/${boxPath}`;
    using repo = tempRepo({
      ".devcontainer/devcontainer.json": JSON.stringify({ image: ref }),
      "test.sh": CHECK_MARKER(marker),
    });
    expect(await engine.hasImage(ref)).toBe(false);
    const ran = await drydock([
      "run",
      "--repo",
      repo.path,
      "--image",
      sandboxImage(),
      "--allow-base-image",
      `${open.address}/*`,
      "--no-diff",
      "--",
      "bash test.sh",
    ]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`tests passed on ${marker}`);
    expect(ran.stderr).toMatch(new RegExp(`pulling ${ref} \\(--pull missing\\)`));
    expect(ran.stderr).toMatch(/pulled .* in [\d.]+ s: [0-9a-f]{12} \(.*@sha256:[0-9a-f]{64}\)/);
    // The environment image records the digest it was built on.
    const env = await new EnvironmentImages(engine, {
      baseImage: sandboxImage(),
      allowBaseImages: [`${open.address}/*`],
      pull: "never",
    }).status(repo.path);
    expect(env.present).toBe(true);
    const labels = (await engine.imageInfo(env.image))!.labels;
    expect(JSON.parse(labels[BASE_DIGESTS_LABEL]!)).toEqual({
      [ref]: expect.stringMatching(new RegExp(`^${open.address}/drydock-test/box@sha256:[0-9a-f]{64}$`)),
    });
    // --pull always pulls again what the engine holds (a tag may have moved); the same image
    // keeps the same environment.
    const again = await drydock([
      "env",
      "build",
      "--repo",
      repo.path,
      "--image",
      sandboxImage(),
      "--allow-base-image",
      `${open.address}/*`,
      "--pull",
      "always",
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(new RegExp(`pulling ${ref} \\(--pull always\\)`));
    expect(again.stderr).toContain(`${env.image} is up to date`);
    await forget(env.image, ref);
  });

  it("--pull never refuses an image the engine lacks, naming the flag to change", async () => {
    const ref = `${open.address}/${boxPath}`;
    using repo = tempRepo({ ".devcontainer/devcontainer.json": JSON.stringify({ image: ref }) });
    const ran = await drydock([
      "env",
      "build",
      "--repo",
      repo.path,
      "--image",
      sandboxImage(),
      "--allow-base-image",
      ref,
      "--pull",
      "never",
    ]);
    expect(ran.code).not.toBe(0);
    expect(ran.stderr).toContain(
      `image ${ref} is not present in the engine, and drydock pulls no image with --pull never; pull it yourself (docker pull ${ref}), or run with --pull missing`,
    );
    expect(await engine.hasImage(ref)).toBe(false);
  });

  it("an image the operator did not allow is refused with the flag that allows it, and never pulled", async () => {
    const ref = `${open.address}/${boxPath}`;
    using repo = tempRepo({ ".devcontainer/devcontainer.json": JSON.stringify({ image: ref }) });
    const ran = await drydock([
      "env",
      "build",
      "--repo",
      repo.path,
      "--image",
      sandboxImage(),
      "--allow-base-image",
      `${open.address}/other/*`,
    ]);
    expect(ran.code).not.toBe(0);
    expect(ran.stderr).toContain(
      `image ${ref} is not present in the engine, and drydock pulls only images the operator allowed with --allow-base-image`,
    );
    expect(ran.stderr).toContain(`add --allow-base-image ${ref}`);
    expect(ran.stderr).not.toMatch(/pulling/);
    expect(await engine.hasImage(ref)).toBe(false);
  });

  it("a pulled image that lacks what a box needs is refused naming each thing, and nothing is tagged", async () => {
    const ref = `${open.address}/${nogitPath}`;
    using repo = tempRepo({ ".devcontainer/devcontainer.json": JSON.stringify({ image: ref }) });
    const ran = await drydock([
      "env",
      "build",
      "--repo",
      repo.path,
      "--image",
      sandboxImage(),
      "--allow-base-image",
      ref,
    ]);
    expect(ran.code).not.toBe(0);
    expect(ran.stderr).toMatch(/pulled /);
    expect(ran.stderr).toContain(
      `${ref} cannot serve as a box: it lacks bash, coreutils, grep, sed, find, procps, git, tar, user 1000`,
    );
    expect(ran.stderr).toMatch(
      /- git \(not found: git\): sessions cannot start .*; add it with: apt-get install git/,
    );
    expect(ran.stderr).toMatch(/No environment image was tagged/);
    const env = await new EnvironmentImages(engine, {
      baseImage: sandboxImage(),
      allowBaseImages: [ref],
      pull: "never",
    }).status(repo.path);
    expect(env.present).toBe(false);
    await forget(ref);
  });

  it("a Dockerfile FROM a registry image (another Python, say) is what the box runs: its marker and the Dockerfile's own", async () => {
    const ref = `${open.address}/${boxPath}`;
    using repo = tempRepo({
      ".devcontainer/devcontainer.json": JSON.stringify({ build: { dockerfile: "Dockerfile" } }),
      ".devcontainer/Dockerfile": `FROM ${ref}\nUSER root\nRUN echo from-dockerfile > /etc/drydock-dockerfile-marker\nUSER agent\n`,
      "test.sh": `${CHECK_MARKER(marker)}test "$(cat /etc/drydock-dockerfile-marker)" = from-dockerfile\n`,
    });
    const ran = await drydock([
      "run",
      "--repo",
      repo.path,
      "--image",
      sandboxImage(),
      "--allow-base-image",
      ref,
      "--no-diff",
      "--",
      "bash test.sh",
    ]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`tests passed on ${marker}`);
    expect(ran.stderr).toMatch(/pulling .* \(--pull missing\)/);
    const env = await new EnvironmentImages(engine, {
      baseImage: sandboxImage(),
      allowBaseImages: [ref],
      pull: "never",
    }).status(repo.path);
    await forget(env.image, `drydock-env-base:${env.plan!.hash}`, ref);
  });

  it("an eval task's image is pulled and its digest recorded; a task with pull: never is refused naming the field", async () => {
    const ref = `${open.address}/${boxPath}`;
    using repo = tempRepo({ "README.md": "hello\n" });
    const work = mkdtempSync(join(state, "eval-"));
    const tasks = join(work, "tasks.jsonl");
    writeFileSync(
      tasks,
      [
        {
          id: "from-registry",
          repo: repo.path,
          prompt: "x",
          image: ref,
          test_cmd: `grep -qx ${marker} /etc/drydock-marker`,
          patch: "",
        },
        {
          id: "never",
          repo: repo.path,
          prompt: "x",
          image: `${open.address}/drydock-test/absent:${run}`,
          pull: "never",
          test_cmd: "true",
          patch: "",
        },
      ]
        .map((t) => JSON.stringify(t))
        .join("\n") + "\n",
    );
    const out = join(work, "out");
    const ran = await drydock(["eval", tasks, "--agent", "patch", "--concurrency", "1", "--out", out], {
      DRYDOCK_IMAGE: sandboxImage(),
    });
    const results = JSON.parse(readFileSync(join(out, "results.json"), "utf8")) as ResultsFile;
    const attempt = (id: string) => results.tasks.find((t) => t.id === id)!.attempts[0]!;
    expect(attempt("from-registry"), ran.stderr).toMatchObject({
      status: "resolved",
      image_digest: expect.stringMatching(
        new RegExp(`^${open.address}/drydock-test/box@sha256:[0-9a-f]{64}$`),
      ),
    });
    expect(attempt("never")).toMatchObject({ status: "setup_error" });
    expect(attempt("never").error).toMatch(
      /drydock pulls no image with pull: never in \S*tasks\.jsonl:2; pull it yourself/,
    );
    expect(attempt("never").error).toContain('set pull: "missing" in');
    await forget(ref);
  });

  it("the operator's --image from a registry is pulled when missing; with --pull never it is refused naming --image", async () => {
    const ref = `${open.address}/${boxPath}`;
    using repo = tempRepo({ "README.md": "hello\n" });
    const never = await drydock([
      "run",
      "--repo",
      repo.path,
      "--image",
      ref,
      "--no-env",
      "--pull",
      "never",
      "--",
      "true",
    ]);
    expect(never.code).not.toBe(0);
    expect(never.stderr).toContain(
      `--image ${ref} is not present in the engine, and drydock pulls no image with --pull never`,
    );
    const ran = await drydock([
      "run",
      "--repo",
      repo.path,
      "--image",
      ref,
      "--no-env",
      "--no-diff",
      "--",
      "cat /etc/drydock-marker",
    ]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.trim()).toBe(marker);
    expect(ran.stderr).toMatch(new RegExp(`pulling ${ref} \\(--pull missing\\)`));
    await forget(ref);
  });

  it("a registry behind a password: credentials from DOCKER_CONFIG pull it, and reach no box, label or log", async () => {
    const ref = `${locked.address}/${boxPath}`;
    using repo = tempRepo({
      ".devcontainer/devcontainer.json": JSON.stringify({ image: ref }),
      "test.sh": `${CHECK_MARKER(marker)}env; cat /proc/1/environ | tr '\\0' '\\n'; ls -a ~ /tmp\n`,
    });
    const args = [
      "run",
      "--repo",
      repo.path,
      "--image",
      sandboxImage(),
      "--allow-base-image",
      `${locked.address}/*`,
    ];
    const anonymous = await drydock([...args, "--no-diff", "--", "bash test.sh"]);
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toMatch(/no basic auth credentials|unauthorized|authentication required/);
    expect(anonymous.stderr).toMatch(/docker login.*DOCKER_CONFIG/);
    expect(await engine.hasImage(ref)).toBe(false);

    const ran = await drydock([...args, "--no-diff", "--", "bash test.sh"], { DOCKER_CONFIG: configDir });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`tests passed on ${marker}`);
    const env = await new EnvironmentImages(engine, {
      baseImage: sandboxImage(),
      allowBaseImages: [`${locked.address}/*`],
      pull: "never",
    }).status(repo.path);
    const inspect = JSON.stringify(await engine.docker.getImage(env.image).inspect());
    for (const secret of [PASSWORD, BASIC]) {
      expect(ran.stdout).not.toContain(secret);
      expect(ran.stderr).not.toContain(secret);
      expect(inspect).not.toContain(secret);
      expect(
        allText(state).replace(readFileSync(join(configDir, "config.json"), "latin1"), ""),
      ).not.toContain(secret);
    }
    await forget(env.image, ref);
  });
});
