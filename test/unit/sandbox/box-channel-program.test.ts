/**
 * The box channel's program is one Python script made of several parts (the watch, git's objects,
 * the tree writer, the restore, the fork). A name defined at the top level of two parts is not an
 * error in Python: the later one silently replaces the earlier for every caller, as a `feed(fd,
 * data)` once did the channel's `feed(proc, data)` (a git then waited 30 s for input that never
 * ended). Every top-level function, class and constant is defined once.
 */
import { describe, expect, it } from "vitest";
import { BOX_CHANNEL_PROGRAM } from "../../../src/sandbox/box-channel-program.js";

describe("the box channel's program", () => {
  it("defines each top-level function, class and constant once", () => {
    const names = new Map<string, number>();
    for (const line of BOX_CHANNEL_PROGRAM.split("\n")) {
      const found = /^(?:def|class)\s+([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*=[^=]/.exec(line);
      const name = found?.[1] ?? found?.[2];
      if (name) names.set(name, (names.get(name) ?? 0) + 1);
    }
    expect(names.size).toBeGreaterThan(20);
    expect([...names].filter(([, n]) => n > 1).map(([name]) => name)).toEqual([]);
  });
});
