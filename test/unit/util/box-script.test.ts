/**
 * Scripts drydock runs in boxes are files under src/ (box-script.ts): what is sent is the file
 * after its comment header, with each @@NAME@@ filled in, and a name given but not used, or used
 * but not given, is an error rather than a script that runs with a hole in it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHECKPOINT_SCRIPT } from "../../../src/workspace/checkpoint-script.js";
import { ADD_CHANGES } from "../../../src/workspace/changed-paths.js";
import { FORK_FUNCTIONS } from "../../../src/workspace/fork-script.js";
import { STOP_SCRIPT } from "../../../src/sandbox/command-stop.js";
import { PROBE_SCRIPT } from "../../../src/sandbox/image-requirements.js";
import { boxScript } from "../../../src/util/box-script.js";
import * as boxFiles from "../../../src/tools/box-file-scripts.js";
import { READ_RANGE_SCRIPT } from "../../../src/library/remote-box-script.js";

const SRC = new URL("../../../src/", import.meta.url).pathname;

function shellFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? shellFiles(path) : name.endsWith(".sh") ? [path] : [];
  });
}

describe("box scripts", () => {
  it("are sent without their header, every placeholder filled", () => {
    const fileScripts = Object.values(boxFiles).filter((value) => typeof value === "string");
    expect(fileScripts).toHaveLength(8);
    for (const script of [
      CHECKPOINT_SCRIPT,
      ADD_CHANGES,
      FORK_FUNCTIONS,
      STOP_SCRIPT,
      PROBE_SCRIPT,
      READ_RANGE_SCRIPT,
      ...fileScripts,
    ]) {
      expect(script).not.toMatch(/@@[A-Z_]+@@/);
      expect(script).not.toContain("shellcheck");
      expect(script.startsWith("\n")).toBe(true);
    }
    expect(boxFiles.READ_SCRIPT.startsWith(boxFiles.RESOLVE)).toBe(true);
    expect(boxFiles.RESOLVE).toContain(`exit ${boxFiles.EXIT.OUTSIDE}`);
    expect(CHECKPOINT_SCRIPT).toContain(ADD_CHANGES);
    expect(CHECKPOINT_SCRIPT).toContain(FORK_FUNCTIONS);
    expect(CHECKPOINT_SCRIPT).toContain("GIT_INDEX_FILE=/tmp/.drydock-index");
    expect(STOP_SCRIPT).toContain('token="DRYDOCK_COMMAND=$2"');
  });

  it("refuse a name not given, or given and not used", () => {
    expect(() => boxScript("sandbox/stop-command.sh")).toThrow(/no value for @@COMMAND_TOKEN_VARIABLE@@/);
    expect(() => boxScript("sandbox/image-probe.sh", { EXTRA: 1 })).toThrow(/@@EXTRA@@ is not in the script/);
  });

  it("each start with a header that names its shell for shellcheck", () => {
    const files = shellFiles(SRC);
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) {
      const first = readFileSync(file, "utf8").split("\n")[0];
      expect(first, file).toMatch(/^#!\/(usr\/bin\/env bash|bin\/sh)$|^# shellcheck shell=(bash|sh)$/);
    }
  });
});
