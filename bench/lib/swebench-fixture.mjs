// The SWE-bench fixture task set the eval benches run: the two repositories' clones under
// `work/clones`, and `copies` copies of each row and gold prediction (instance ids suffixed
// -1, -2, ...) written to `work/rows.jsonl` and `work/preds.jsonl`.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const SWEBENCH_FIXTURES = join(import.meta.dirname, "..", "..", "test", "fixtures", "swebench");

const jsonl = (file) =>
  readFileSync(join(SWEBENCH_FIXTURES, file), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

export function prepareSwebenchFixture(work, copies) {
  mkdirSync(join(work, "clones"));
  for (const [bundle, name] of [
    ["six.bundle", "benjaminp__six"],
    ["more-itertools.bundle", "more-itertools__more-itertools"],
  ]) {
    execFileSync("git", ["clone", "-q", join(SWEBENCH_FIXTURES, bundle), join(work, "clones", name)]);
  }
  const taskRows = [];
  const predRows = [];
  for (let c = 1; c <= copies; c++) {
    for (const row of jsonl("rows.jsonl")) taskRows.push({ ...row, instance_id: `${row.instance_id}-${c}` });
    for (const p of jsonl("predictions-gold.jsonl"))
      predRows.push({ ...p, instance_id: `${p.instance_id}-${c}` });
  }
  writeFileSync(join(work, "rows.jsonl"), taskRows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  writeFileSync(join(work, "preds.jsonl"), predRows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return taskRows.length;
}
