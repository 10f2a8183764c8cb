// A process of its own that forks a session whose checkpoint holds a large change, for
// test/security/fork-memory.test.ts: its peak resident memory (VmHWM) is then the fork's and
// this process's alone, not the test runner's. Uses the built library (dist/).
//
//   node test/helpers/fork-memory-child.mjs <repo> <image> <MiB of random files> <copies>
//
// Prints one JSON line: the peak before and after the fork, the resident size after, and whether
// each fork's files are the source's, byte for byte.
import { readFileSync } from "node:fs";

const [repo, image, mib, copies] = process.argv.slice(2);
const { Engine } = await import("../../dist/engine/engine.js");
const { Session } = await import("../../dist/session/session.js");
const { forkSession } = await import("../../dist/session/session-fork.js");
const { setLogLevel } = await import("../../dist/util/log.js");
setLogLevel(process.env.FORK_MEMORY_LOG ?? "warning");

/** VmHWM and VmRSS of this process, in bytes. */
function memory() {
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB$`, "m").exec(status)[1]) * 1024;
  return { peak: kb("VmHWM"), resident: kb("VmRSS") };
}

async function sh(session, command) {
  const result = await session.bash(command, { timeoutMs: 600_000 });
  if (result.exitCode !== 0) throw new Error(`${command}: ${result.output}`);
  return result.stdout;
}

const engine = await Engine.connect();
const sessions = [];
try {
  const source = await Session.create(engine, { repo, image });
  sessions.push(source);
  // Random bytes do not compress: the pack is about as large as the files. 10 MiB a file.
  const files = Math.ceil(Number(mib) / 10);
  await sh(
    source,
    `mkdir -p big && for i in $(seq 1 ${files}); do head -c 10M /dev/urandom > big/f$i.bin; done`,
  );
  const sums = "cd /workspace && sha256sum big/* && git status --porcelain";
  const want = await sh(source, sums);
  await source.checkpoint("big");
  const before = memory();
  const started = Date.now();
  const forks = await forkSession(
    source,
    { n: Number(copies), checkpoint: "big" },
    (options) => Session.create(engine, options),
    (s) => s.destroy(),
  );
  const forkMs = Date.now() - started;
  sessions.push(...forks);
  const after = memory();
  const same = [];
  for (const fork of forks) same.push((await sh(fork, sums)) === want);
  process.stdout.write(`${JSON.stringify({ before, after, forkMs, same, files })}\n`);
} finally {
  await Promise.allSettled(sessions.map((s) => s.destroy()));
}
process.exit(0);
