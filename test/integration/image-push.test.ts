/**
 * `drydock image push` against the real engine and registries this test starts on 127.0.0.1
 * (Debian's docker-registry; one open, one behind htpasswd). The digest it prints is the one the
 * registry serves the tag by (asked over the registry's own API by registry-manifest.ts, the way
 * a Kubernetes backend pins a tag), a registry's credentials come from the client configuration
 * and nowhere else, and a target without a registry host, with a digest, or an image the engine
 * lacks is refused before anything is pushed.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { manifestDigest } from "../../src/engine/registry-manifest.js";
import { runDrydock, type CliRun } from "../helpers/cli.js";
import { LoopbackRegistry } from "../helpers/loopback-registry.js";
import { tinyImageWithoutGit } from "../helpers/registry-images.js";
import { testEngine } from "../helpers/sessions.js";

const run = randomBytes(4).toString("hex");
const USER = "pusher";
const PASSWORD = `pw-${randomBytes(9).toString("hex")}`;
const local = `drydock-push-test:${run}`;

let engine: Engine;
let open: LoopbackRegistry;
let locked: LoopbackRegistry;
let dir: string;
let withCredentials: string;
let withoutCredentials: string;

function drydock(args: string[], configDir: string): Promise<CliRun> {
  return runDrydock(args, { DRYDOCK_STATE_DIR: join(dir, "state"), DOCKER_CONFIG: configDir });
}

beforeAll(async () => {
  engine = await testEngine();
  dir = mkdtempSync(join(tmpdir(), "drydock-push-"));
  open = await LoopbackRegistry.start();
  locked = await LoopbackRegistry.start({ htpasswd: { user: USER, password: PASSWORD } });
  withoutCredentials = join(dir, "no-config");
  withCredentials = join(dir, "config");
  mkdirSync(withCredentials);
  const auth = Buffer.from(`${USER}:${PASSWORD}`).toString("base64");
  writeFileSync(
    join(withCredentials, "config.json"),
    JSON.stringify({ auths: { [locked.address]: { auth } } }),
  );
  await tinyImageWithoutGit(engine, local);
}, 120_000);

afterAll(async () => {
  for (const ref of [local, `${open.address}/push/tiny:${run}`, `${open.address}/push/tiny:v2`]) {
    await engine.removeImage(ref).catch(() => undefined);
  }
  for (const ref of [`${locked.address}/push/tiny:${run}`])
    await engine.removeImage(ref).catch(() => undefined);
  await open?.[Symbol.asyncDispose]();
  await locked?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

describe("drydock image push", () => {
  it("pushes an image under its own tag and prints it by the digest the registry serves", async () => {
    const ran = await drydock(
      ["image", "push", `${open.address}/push/tiny`, "--image", local],
      withoutCredentials,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const printed = ran.stdout.trim();
    expect(printed).toMatch(
      new RegExp(`^${open.address.replace(/\./g, "\\.")}/push/tiny@sha256:[a-f0-9]{64}$`),
    );
    const digest = printed.split("@")[1]!;
    // The registry's own answer for the tag (the source's tag, kept) and for the digest.
    expect(await manifestDigest(`${open.address}/push/tiny:${run}`, null)).toBe(digest);
    expect(await manifestDigest(printed, null)).toBe(digest);
    expect(ran.stderr).toMatch(/pushing .*push\/tiny/);
    // The engine records it too, as `docker push` leaves it.
    const info = await engine.imageInfo(local);
    expect(info?.repoDigests).toContain(printed);
  }, 120_000);

  it("takes the tag the target names, and --json prints all three names", async () => {
    const ran = await drydock(
      ["image", "push", `${open.address}/push/tiny:v2`, "--image", local, "--json"],
      withoutCredentials,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const pushed = JSON.parse(ran.stdout) as { tagged: string; byDigest: string; digest: string };
    expect(pushed.tagged).toBe(`${open.address}/push/tiny:v2`);
    expect(pushed.byDigest).toBe(`${open.address}/push/tiny@${pushed.digest}`);
    expect(await manifestDigest(pushed.tagged, null)).toBe(pushed.digest);
  }, 120_000);

  it("a registry behind credentials: refused without them, naming the login; pushed with the client configuration's", async () => {
    const refused = await drydock(
      ["image", "push", `${locked.address}/push/tiny`, "--image", local],
      withoutCredentials,
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`docker login ${locked.address}`);
    expect(refused.stdout).toBe("");

    const ran = await drydock(
      ["image", "push", `${locked.address}/push/tiny`, "--image", local],
      withCredentials,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const digest = ran.stdout.trim().split("@")[1]!;
    // Asking the registry: anonymous is refused with the fix; the configuration's credentials see it.
    await expect(manifestDigest(`${locked.address}/push/tiny:${run}`, null)).rejects.toThrow(
      /refused.*docker login/,
    );
    const saved = process.env.DOCKER_CONFIG;
    process.env.DOCKER_CONFIG = withCredentials;
    try {
      expect(await manifestDigest(`${locked.address}/push/tiny:${run}`)).toBe(digest);
    } finally {
      if (saved === undefined) delete process.env.DOCKER_CONFIG;
      else process.env.DOCKER_CONFIG = saved;
    }
    // The password is in no output.
    expect(ran.stdout + ran.stderr + refused.stderr).not.toContain(PASSWORD);
  }, 120_000);

  it("refuses a target without a registry host, with a digest, or an image the engine lacks, before pushing", async () => {
    for (const [target, why] of [
      ["push/tiny", /names no registry host/],
      ["tiny:1", /names no registry host/],
      [`${open.address}/push/tiny@sha256:${"a".repeat(64)}`, /names a digest/],
      [`${open.address}/Push/Tiny`, /is not an image name/],
    ] as const) {
      const ran = await drydock(["image", "push", target, "--image", local], withoutCredentials);
      expect(ran.code, target).not.toBe(0);
      expect(ran.stderr, target).toMatch(why);
      expect(ran.stderr, target).toMatch(/target/);
    }
    const missing = await drydock(
      ["image", "push", `${open.address}/push/nothing`, "--image", `drydock-push-missing:${run}`],
      withoutCredentials,
    );
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/no image drydock-push-missing.*to push/);
    expect(await manifestDigest(`${open.address}/push/nothing:${run}`, null)).toBeUndefined();
  }, 120_000);
});
