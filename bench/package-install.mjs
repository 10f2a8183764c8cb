// What installing drydock costs a user: the packed tarball installed into an empty project (the
// packages and bytes it adds, and the time), and a first `npx --package <tgz> drydock --version`,
// each with npm's cache empty (cold: every package downloaded) and full (warm). Rounds interleave
// cold and warm so load on the machine falls on both alike. The Kubernetes client is an optional
// peer: the last row adds it, as a user of a cluster would.
//
//   npm run build && node bench/package-install.mjs     (BENCH_RUNS=N rounds, default 2)
//
// Writes bench/results/package-install-<time>.json (git ignores it), or BENCH_RESULTS_DIR.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchResults, spread } from "./lib/results.mjs";
import { stats } from "./lib/stats.mjs";

const runs = Number(process.env.BENCH_RUNS ?? 2);
const say = (text) => process.stderr.write(`[bench] ${text}\n`);
const root = new URL("..", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "drydock-bench-install-"));
const { results, noteLoad, write } = benchResults("package-install", { runs }, say);

/** Bytes and package.json count under a directory (symbolic links not followed). */
function measure(dir) {
  let bytes = 0;
  let packages = 0;
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
        bytes += statSync(path).size;
        if (entry.name === "package.json" && /node_modules\/(@[^/]+\/)?[^/]+\/package\.json$/.test(path))
          packages++;
      }
    }
  };
  walk(dir);
  return { bytes, packages };
}

function timed(command, args, options) {
  const started = process.hrtime.bigint();
  const r = spawnSync(command, args, { encoding: "utf8", ...options });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const packed = JSON.parse(
  execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", scratch], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  }),
)[0];
const tarball = join(scratch, packed.filename);
say(`packed ${packed.filename}: ${(packed.size / 1e6).toFixed(2)} MB, ${packed.entryCount} files`);

const warmCache = join(scratch, "cache-warm");
const samples = {};
const add = (name, ms) => (samples[name] ??= []).push(ms);
let sizes;
let withKubernetes;

noteLoad("start");
for (let round = 0; round < runs; round++) {
  for (const cache of ["cold", "warm"]) {
    const cacheDir = cache === "warm" ? warmCache : join(scratch, `cache-cold-${round}`);
    const project = mkdtempSync(join(scratch, "project-"));
    const npm = (args) => ["--cache", cacheDir, "--no-audit", "--no-fund", "--loglevel", "error", ...args];
    add(
      `install (${cache} cache)`,
      timed("npm", npm(["install", "--prefix", project, tarball]), { cwd: project }),
    );
    sizes ??= measure(join(project, "node_modules"));
    add(
      `first npx start (${cache} cache)`,
      timed("npx", npm(["--yes", "--package", tarball, "drydock", "--version"]), { cwd: project }),
    );
    if (round === 0 && cache === "warm") {
      timed("npm", npm(["install", "--prefix", project, "@kubernetes/client-node@1.4.0"]), { cwd: project });
      withKubernetes = measure(join(project, "node_modules"));
    }
    if (cache === "cold") rmSync(cacheDir, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  }
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
say(`installed: ${sizes.packages} packages, ${mb(sizes.bytes)}`);
say(`with the Kubernetes client added: ${withKubernetes.packages} packages, ${mb(withKubernetes.bytes)}`);
results.rows.push({ name: "installed", packages: sizes.packages, bytes: sizes.bytes });
results.rows.push({
  name: "with @kubernetes/client-node",
  packages: withKubernetes.packages,
  bytes: withKubernetes.bytes,
});
for (const [name, ms] of Object.entries(samples)) {
  const s = stats(ms);
  say(`${name}: ${spread({ median: s.median / 1000, p10: s.p10 / 1000, p90: s.p90 / 1000 })} s`);
  results.rows.push({ name, ms: s });
}
write();
rmSync(scratch, { recursive: true, force: true });
