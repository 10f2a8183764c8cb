/**
 * A fork's pack does not pass through the host's memory whole: it streams from the source's box
 * into the new box with backpressure, so drydock's own memory stays flat however large the
 * checkpoint is. The fork runs in a process of its own (test/helpers/fork-memory-child.mjs), whose
 * peak resident size (VmHWM) is read before and after: 190 MiB of random files (a pack about as
 * large) forked into two copies may grow it by at most 64 MiB. Held whole, the pack grew it by
 * over a gigabyte. Runs under runc and gVisor.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage } from "../helpers/sessions.js";

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
