import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadPredictions } from "../../../src/eval/predictions.js";

describe("loadPredictions", () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), "drydock-preds-"));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("lists the ids a folder and a predictions file answer", async () => {
    const folder = dir();
    writeFileSync(join(folder, "a.diff"), "");
    writeFileSync(join(folder, "b.patch"), "");
    writeFileSync(join(folder, "notes.txt"), "");
    expect((await loadPredictions(folder)).ids.sort()).toEqual(["a", "b"]);
    const file = join(dir(), "preds.jsonl");
    writeFileSync(
      file,
      [
        '{"instance_id":"x","model_patch":"","model_name_or_path":"m"}',
        '{"instance_id":"y","model_patch":null}',
      ].join("\n"),
    );
    expect((await loadPredictions(file)).ids).toEqual(["x", "y"]);
  });

  it("refuses a folder holding two answers for one task", async () => {
    const folder = dir();
    writeFileSync(join(folder, "a.diff"), "");
    writeFileSync(join(folder, "a.patch"), "");
    await expect(loadPredictions(folder)).rejects.toThrow(
      /--patches: .*: holds both a\.diff and a\.patch; keep one answer per task/,
    );
  });
});
