/**
 * What `drydock sessions prune` and `sessions rm` may remove: this state directory's boxes whose
 * drydock process is gone, and nothing else unless a flag names it and the removal is confirmed.
 * Every box here is made by this test, labelled with state directories of its own (unique temp
 * paths), and every widening is limited to those directories with --state-dir: the test never
 * removes a box it did not make, even beside other drydocks on the same engine. --every-state-dir
 * is run only without --yes, where it must refuse and remove nothing.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { currentOwner, formatOwner } from "../../src/engine/labels.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function drydock(state: string, args: string[], input?: string): Promise<Ran> {
  const child = spawn(process.execPath, [cli, ...args], {
    env: { ...process.env, DRYDOCK_STATE_DIR: state },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(input ?? "");
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** The same, on a terminal of its own (script(1)), answering the prompt with `answer`. */
function drydockOnTerminal(state: string, args: string[], answer: string): Promise<Ran> {
  const line = [process.execPath, cli, ...args].map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(" ");
  const child = spawn("script", ["-qec", line, "/dev/null"], {
    env: { ...process.env, DRYDOCK_STATE_DIR: state },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
    if (stdout.includes("[y/N]") && !child.stdin.writableEnded) child.stdin.end(`${answer}\n`);
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr: "" })));
}

const made: string[] = [];

/** A stopped box with drydock's labels, as a drydock of `state` owned by `owner` would leave it. */
function box(state: string, owner?: string): { id: string; session: string } {
  const session = randomBytes(6).toString("hex");
  const labels = ["drydock.session=" + session, "drydock.state=" + state, "drydock.test=prune-scope"];
  if (owner) labels.push("drydock.owner=" + owner);
  const id = execFileSync(
    "docker",
    ["create", ...labels.flatMap((l) => ["--label", l]), inject("sandboxImage"), "true"],
    { encoding: "utf8" },
  ).trim();
  made.push(id);
  return { id, session };
}

function exists(id: string): boolean {
  try {
    execFileSync("docker", ["inspect", "--format", "{{.Id}}", id], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Box ids labelled with a state directory. */
function boxesOf(state: string): string[] {
  return execFileSync("docker", ["ps", "-aq", "--no-trunc", "--filter", `label=drydock.state=${state}`], {
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("sessions prune and rm stay within this state directory unless told and confirmed", () => {
  const root = mkdtempSync(join(tmpdir(), "drydock-prune-scope-"));
  const here = join(root, "here");
  const other = join(root, "other");
  const live = join(root, "live");
  let repo: TempRepo;
  let server: ChildProcess | undefined;
  let liveBox: string;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "prune scope\n" });
    // A running server with a state directory of its own: its warm box is a live session's box.
    server = spawn(
      process.execPath,
      [cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage"), "--no-env", "--pool", "1"],
      { env: { ...process.env, DRYDOCK_STATE_DIR: live }, stdio: ["pipe", "ignore", "ignore"] },
    );
    await waitFor(() => boxesOf(live).length > 0, "the live server's warm box");
    liveBox = boxesOf(live)[0]!;
  });

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const closed = new Promise((r) => server!.once("close", r));
      server.kill("SIGTERM");
      await closed;
    }
    const leftovers = [...made, ...boxesOf(live)].filter(exists);
    if (leftovers.length) execFileSync("docker", ["rm", "-f", ...leftovers], { stdio: "ignore" });
    repo?.[Symbol.dispose]();
    rmSync(root, { recursive: true, force: true });
  });

  it("prune --all removes this state directory's orphans only: not another's, not a live owner's", async () => {
    const mine = box(here);
    const theirs = box(other);
    const mineLive = box(here, formatOwner(currentOwner()));
    const ran = await drydock(here, ["sessions", "prune", "--all"]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(
      `  removed ${mine.session} (box ${mine.id.slice(0, 12)}, this state directory, owner gone)`,
    );
    expect(exists(mine.id)).toBe(false);
    expect(exists(theirs.id)).toBe(true);
    expect(exists(mineLive.id)).toBe(true);
    expect(exists(liveBox)).toBe(true);
  });

  it("removes another state directory's box only with --state-dir and a confirmation", async () => {
    const theirs = box(other);
    const refused = await drydock(here, ["sessions", "prune", "--state-dir", other]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("nothing removed: this would remove");
    expect(refused.stderr).toContain(
      `${theirs.session} (box ${theirs.id.slice(0, 12)}, state directory ${other}, owner gone)`,
    );
    expect(refused.stderr).toContain(`confirm with drydock sessions prune --state-dir ${other} --yes`);
    expect(exists(theirs.id)).toBe(true);

    const declined = await drydockOnTerminal(here, ["sessions", "prune", "--state-dir", other], "n");
    expect(declined.stdout).toContain("remove them? [y/N]");
    expect(declined.stdout).toContain("nothing removed");
    expect(exists(theirs.id)).toBe(true);

    const confirmed = await drydock(here, ["sessions", "prune", "--state-dir", other, "--yes"]);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stdout).toContain(
      `  removed ${theirs.session} (box ${theirs.id.slice(0, 12)}, state directory ${other}`,
    );
    expect(exists(theirs.id)).toBe(false);
    expect(exists(liveBox)).toBe(true);
  });

  it("asks on a terminal, and goes on with y", async () => {
    const theirs = box(other);
    const ran = await drydockOnTerminal(here, ["sessions", "prune", "--state-dir", other], "y");
    expect(ran.stdout).toContain("remove them? [y/N]");
    expect(ran.stdout).toContain(`  removed ${theirs.session}`);
    expect(exists(theirs.id)).toBe(false);
  });

  it("--every-state-dir without --yes refuses and removes nothing", async () => {
    const theirs = box(other);
    const ran = await drydock(here, ["sessions", "prune", "--every-state-dir"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(
      `${theirs.session} (box ${theirs.id.slice(0, 12)}, state directory ${other}, owner gone)`,
    );
    expect(exists(theirs.id)).toBe(true);
    expect(exists(liveBox)).toBe(true);
  });

  it("a running server's box survives a prune naming its state directory, unless --live is given and confirmed", async () => {
    const named = await drydock(here, ["sessions", "prune", "--all", "--state-dir", live, "--yes"]);
    expect(named.code, named.stderr).toBe(0);
    expect(exists(liveBox)).toBe(true);
    const unconfirmed = await drydock(here, ["sessions", "prune", "--live", "--state-dir", live]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(
      new RegExp(`box ${liveBox.slice(0, 12)}, state directory ${live}, owner running\\)`),
    );
    expect(exists(liveBox)).toBe(true);
    const confirmed = await drydock(here, ["sessions", "prune", "--live", "--state-dir", live, "--yes"]);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stdout).toContain(
      `box ${liveBox.slice(0, 12)}, state directory ${live}, owner running)`,
    );
    expect(exists(liveBox)).toBe(false);
  });

  it("rm removes a live owner's box only with --live and a confirmation", async () => {
    const mineLive = box(here, formatOwner(currentOwner()));
    const plain = await drydock(here, ["sessions", "rm", mineLive.session]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain("belongs to a drydock process that is still running");
    expect(plain.stderr).toContain("add --live to remove it anyway");
    const unconfirmed = await drydock(here, ["sessions", "rm", "--live", mineLive.session]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain(`confirm with drydock sessions rm --live ${mineLive.session} --yes`);
    expect(exists(mineLive.id)).toBe(true);
    const confirmed = await drydock(here, ["sessions", "rm", "--live", "--yes", mineLive.session]);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stdout).toBe(
      `removed ${mineLive.session} (box ${mineLive.id.slice(0, 12)}, this state directory, owner running)\n`,
    );
    expect(exists(mineLive.id)).toBe(false);
    // Another state directory's box is not even found without --state-dir.
    const theirs = box(other);
    const elsewhere = await drydock(here, ["sessions", "rm", theirs.session]);
    expect(elsewhere.code).not.toBe(0);
    expect(exists(theirs.id)).toBe(true);
  });
});
