// The runsc entry of the Docker Engine, for scripts/setup.sh (see docs/runtimes.md).
//   node scripts/runsc-runtime.mjs check         exit 0: the engine has runsc with the arguments boxes need
//   node scripts/runsc-runtime.mjs merge FILE    adds (or corrects) runtimes.runsc in a daemon.json, keeping the rest
import { readFileSync, writeFileSync, existsSync, mkdirSync, renameSync } from "node:fs";
import { dirname } from "node:path";
import Docker from "dockerode";

// The same as RUNSC_ARGS in src/sandbox/box-runtime.ts.
const ARGS = ["--network=none"];
const [verb, file] = process.argv.slice(2);

if (verb === "check") {
  const info = await new Docker({ timeout: 5_000 }).info().catch(() => ({}));
  const runsc = info.Runtimes?.runsc;
  const ok = runsc !== undefined && ARGS.every((a) => (runsc.runtimeArgs ?? []).includes(a));
  process.exit(ok ? 0 : runsc ? 3 : 1);
} else if (verb === "merge" && file) {
  const config = existsSync(file) ? JSON.parse(readFileSync(file, "utf8") || "{}") : {};
  const entry = { path: process.env.RUNSC_PATH ?? "/usr/bin/runsc", runtimeArgs: ARGS };
  if (JSON.stringify(config.runtimes?.runsc) === JSON.stringify(entry)) process.exit(0);
  config.runtimes = { ...config.runtimes, runsc: entry };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.drydock-new`, JSON.stringify(config, null, 2) + "\n");
  renameSync(`${file}.drydock-new`, file);
  process.stderr.write(`[setup] ${file}: runtimes.runsc = ${JSON.stringify(entry)}\n`);
} else {
  process.stderr.write("usage: node scripts/runsc-runtime.mjs check | merge DAEMON_JSON\n");
  process.exit(2);
}
