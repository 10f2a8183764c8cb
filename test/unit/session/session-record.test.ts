/**
 * A session record is read while its server rewrites it (a reaper deciding whether a kept box
 * stays, `drydock sessions list`): every read sees a whole record, old or new, never an empty or
 * half-written file that would make a kept session look like one without a record and get its box
 * removed.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  readSessionRecord,
  removeStaleRecordTemps,
  sessionRecordsDir,
  writeSessionRecord,
  type SessionRecord,
} from "../../../src/session/session-record.js";

const ID = "0123456789ab";

/** A record as large as a kept, adopted one with a long repository path. */
const record = (n: number): SessionRecord => ({
  repo: `/home/someone/${"project/".repeat(40)}${n}`,
  base_commit: "a".repeat(40),
  kept_until: new Date(0).toISOString(),
  adopted_by: `host/${n}/1`,
  limits: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`limit_${i}`, i])),
});

describe("session records", () => {
  let state: string;
  let saved: string | undefined;
  beforeEach(() => {
    state = mkdtempSync(join(tmpdir(), "drydock-record-"));
    saved = process.env.DRYDOCK_STATE_DIR;
    process.env.DRYDOCK_STATE_DIR = state;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.DRYDOCK_STATE_DIR;
    else process.env.DRYDOCK_STATE_DIR = saved;
    rmSync(state, { recursive: true, force: true });
  });

  it("are read whole while they are rewritten, and leave no temporary file", async () => {
    await writeSessionRecord(ID, record(0));
    // Writes and reads at once on the file system's threads, as a server and a reaper make them.
    let writing = true;
    const writer = (async () => {
      for (let n = 1; n <= 500; n++) await writeSessionRecord(ID, record(n));
      writing = false;
    })();
    let reads = 0;
    const torn: number[] = [];
    const reader = async () => {
      while (writing) {
        const read = await readSessionRecord(ID, state);
        reads++;
        if (read === undefined) torn.push(reads);
      }
    };
    await Promise.all([writer, reader(), reader()]);
    expect(reads).toBeGreaterThan(100);
    expect(torn.length, `${torn.length} of ${reads} reads found no whole record`).toBe(0);
    expect(await readSessionRecord(ID, state)).toEqual(record(500));
    expect(readdirSync(join(state, "sessions"))).toEqual([`${ID}.json`]);
  }, 60_000);
  it("removes only the temporary files of writes that never finished, once old; never what a link names", async () => {
    await writeSessionRecord(ID, record(1));
    const dir = sessionRecordsDir();
    const outside = join(state, "outside.txt");
    writeFileSync(outside, "keep me\n");
    const old = new Date(Date.now() - 10 * 60_000);
    const at = (name: string) => join(dir, name);
    const made = {
      stale: `${ID}.json.tmp-4242-0123abcd`,
      fresh: `${ID}.json.tmp-4243-89abcdef`,
      link: `${ID}.json.tmp-4244-deadbeef`,
      dir: `${ID}.json.tmp-4245-cafef00d`,
      other: `${ID}.json.tmp-x-0123abcd`,
      notes: "notes.txt",
    };
    writeFileSync(at(made.stale), "{");
    writeFileSync(at(made.fresh), "{");
    symlinkSync(outside, at(made.link));
    mkdirSync(at(made.dir));
    writeFileSync(at(made.other), "{");
    writeFileSync(at(made.notes), "mine\n");
    for (const name of [made.stale, made.dir, made.other, made.notes]) utimesSync(at(name), old, old);
    // Asked as if two minutes from now, so the fresh file and the link (whose own time is now) are
    // past the grace too; the grace itself is checked after.
    const removed = await removeStaleRecordTemps(60_000, Date.now() + 2 * 60_000);
    expect(removed).toBe(3);
    expect(existsSync(at(made.stale))).toBe(false);
    expect(existsSync(at(made.fresh))).toBe(false);
    expect(() => lstatSync(at(made.link))).toThrow();
    expect(readFileSync(outside, "utf8")).toBe("keep me\n");
    expect(lstatSync(at(made.dir)).isDirectory()).toBe(true);
    expect(existsSync(at(made.other))).toBe(true);
    expect(existsSync(at(made.notes))).toBe(true);
    expect((await readSessionRecord(ID))?.repo).toBe(record(1).repo);

    // Within the grace, a temporary file is a write under way: left alone.
    writeFileSync(at(made.fresh), "{");
    expect(await removeStaleRecordTemps(60_000)).toBe(0);
    expect(existsSync(at(made.fresh))).toBe(true);
  });
});
