/**
 * A fork's pack does not pass through the host's memory whole: it streams from the source's box
 * into the new box with backpressure, so drydock's own memory stays flat however large the
 * checkpoint is. The fork runs in a process of its own (test/helpers/fork-memory-child.mjs), whose
 * peak resident size (VmHWM) is read before and after: 190 MiB of random files (a pack about as
 * large) forked into two copies may grow it by at most 64 MiB. Held whole, the pack grew it by
 * over a gigabyte. A streamed pack is then attacked as the source's agent would: its checkpoint
 * moved or its objects removed between the first export and the stream, or a pack past the
 * limit: the new box is refused, and holds nothing of it. Runs under runc and gVisor.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/session.js";
import { CheckpointDamagedError, LimitExceededError } from "../../src/util/errors.js";
import { exportCheckpoint, importCheckpoint } from "../../src/workspace/box-checkpoint.js";
import { CHECKPOINT_REFS } from "../../src/workspace/checkpoint-refs.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { sandboxImage, testSession } from "../helpers/sessions.js";

const run = promisify(execFile);
const MIB = 1024 * 1024;
/** The most a fork of a 190 MiB checkpoint into two copies may add to drydock's peak memory. */
const MAX_GROWTH_BYTES = 64 * MIB;

describe("a fork of a large checkpoint", () => {
  it("streams its pack box to box, drydock's peak memory growing by under 64 MiB for 190 MiB", async () => {
    using repo = tempRepo({ "a.txt": "one\n" });
    const { stdout } = await run(
      process.execPath,
      ["test/helpers/fork-memory-child.mjs", repo.path, sandboxImage(), "190", "2"],
      { maxBuffer: 1 << 20, timeout: 900_000 },
    );
    const result = JSON.parse(stdout.trim().split("\n").pop()!) as {
      before: { peak: number; resident: number };
      after: { peak: number; resident: number };
      forkMs: number;
      same: boolean[];
    };
    const growth = result.after.peak - result.before.peak;
    console.log(
      `fork of 190 MiB into 2: ${result.forkMs} ms; peak ${(result.before.peak / MIB).toFixed(0)} -> ${(result.after.peak / MIB).toFixed(0)} MiB, resident after ${(result.after.resident / MIB).toFixed(0)} MiB`,
    );
    expect(result.same, "each fork's files are the source's").toEqual([true, true]);
    expect(growth, `peak memory grew by ${(growth / MIB).toFixed(0)} MiB`).toBeLessThan(MAX_GROWTH_BYTES);
  }, 900_000);
});

async function sh(session: Session, command: string): Promise<string> {
  const r = await session.bash(command);
  expect(r.exitCode, r.output).toBe(0);
  return r.stdout;
}

describe("a fork's streamed pack", () => {
  const repos: TempRepo[] = [];
  const sessions: Session[] = [];
  afterEach(async () => {
    await Promise.allSettled(sessions.splice(0).map((s) => s.destroy()));
    for (const repo of repos.splice(0)) repo[Symbol.dispose]();
  });

  /**
   * A source with checkpoint "k" of 3 MiB of random files, its export to a box holding nothing
   * (streamed past 1 MiB), and a new box to import it into.
   */
  async function streamed(maxBytes = 64 * MIB) {
    const repo = tempRepo({ "a.txt": "one\n" });
    repos.push(repo);
    const source = await testSession(repo.path);
    const target = await testSession(repo.path);
    sessions.push(source, target);
    await sh(
      source,
      "mkdir big && for i in 1 2 3; do head -c 1M /dev/urandom > big/f$i; done && echo two > a.txt",
    );
    await source.checkpoint("k");
    const entry = source.checkpoints.get("k");
    const exported = await exportCheckpoint(source.box, entry.slot, {
      name: "k",
      commit: entry.commit,
      baseCommit: source.baseCommit,
      includeIgnored: false,
      have: [],
      maxBytes,
      heldBytes: MIB,
    });
    expect(exported.pack, "a pack past what is held").toBeUndefined();
    const slot = "f".repeat(16);
    const untouched = async () => {
      expect(await sh(target, `git for-each-ref ${CHECKPOINT_REFS}/; cat a.txt; ls`)).toBe("one\na.txt\n");
    };
    return { source, target, entry, exported, slot, untouched };
  }

  it("ends where the source is when nothing is changed", async () => {
    const { source, target, exported, slot } = await streamed();
    const imported = await importCheckpoint(target.box, slot, exported, { name: "k" });
    expect(imported.packBytes).toBeGreaterThan(3 * MIB);
    const view = "cat a.txt && sha256sum big/* && git status --porcelain";
    expect(await sh(target, view)).toBe(await sh(source, view));
  });

  it("is refused when the source's checkpoint moved after its first export, leaving nothing", async () => {
    const { source, target, entry, exported, slot, untouched } = await streamed();
    await sh(source, `git update-ref ${CHECKPOINT_REFS}/${entry.slot} HEAD`);
    await expect(importCheckpoint(target.box, slot, exported, { name: "k" })).rejects.toThrow(
      CheckpointDamagedError,
    );
    await untouched();
  });

  it("is refused when an object of the checkpoint is gone from the source, leaving nothing", async () => {
    const { source, target, entry, exported, slot, untouched } = await streamed();
    const removed = await sh(
      source,
      `b=$(git rev-parse ${entry.commit}:w/big/f2) && rm -f .git/objects/\${b:0:2}/\${b:2} && ! git cat-file -e $b 2>/dev/null && echo gone`,
    );
    expect(removed).toBe("gone\n");
    await expect(importCheckpoint(target.box, slot, exported, { name: "k" })).rejects.toThrow(
      CheckpointDamagedError,
    );
    await untouched();
  });

  it("is refused once it passes the checkpoint limit, leaving nothing", async () => {
    const { target, exported, slot, untouched } = await streamed(2 * MIB);
    await expect(importCheckpoint(target.box, slot, exported, { name: "k" })).rejects.toThrow(
      LimitExceededError,
    );
    await untouched();
  });
});
