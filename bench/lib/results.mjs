// What a bench run on its own (`node bench/<name>.mjs`) records: the machine, the load average
// when each part starts, its rows, written as bench/results/<name>-<time>.json (git ignores it)
// or into BENCH_RESULTS_DIR.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join, resolve } from "node:path";

/** A median with its spread, as the benches print it. */
export const spread = (s) => `${s.median.toFixed(1)} (p10-p90 ${s.p10.toFixed(1)}-${s.p90.toFixed(1)})`;

/**
 * The results of bench `name` (`fields` join the machine, the date, the load and the rows) and
 * what records them; `say` prints a line.
 */
export function benchResults(name, fields, say) {
  const results = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30) },
    ...fields,
    // Load averages (1, 5, 15 min) when each part starts and when the run ends: the machine is shared.
    load: [],
    rows: [],
  };
  const noteLoad = (at) => {
    const [one, five, fifteen] = loadavg();
    results.load.push({ at, one, five, fifteen });
    say(`load average ${one.toFixed(2)} ${five.toFixed(2)} ${fifteen.toFixed(2)} (${at})`);
  };
  const write = () => {
    noteLoad("end");
    const dir = resolve(process.env.BENCH_RESULTS_DIR ?? new URL("../results/", import.meta.url).pathname);
    mkdirSync(dir, { recursive: true });
    const out = join(dir, `${name}-${results.date.replace(/[:.]/g, "-")}.json`);
    writeFileSync(out, JSON.stringify(results, null, 2) + "\n");
    say(`wrote ${out}`);
  };
  return { results, noteLoad, write };
}
