// runc against runsc (gVisor), side by side and interleaved in one loop so that load on the machine
// falls on both alike: session ready, the shell's round trip, git diff, and an aider run with the
// offline model through the gateway. Prints a Markdown table with median, p10 and p90; with
// --out FILE it also writes the samples as JSON (never over a tracked file unless you name it).
//   node bench/runtime.mjs [--runs N] [--aider-runs N] [--out bench/results/runtime.json]
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { interleaved } from "./lib/stats.mjs";
import { makeRepo, removeDir } from "./lib/repos.mjs";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "15" },
    "aider-runs": { type: "string", default: "5" },
    out: { type: "string" },
  },
});
const runs = Number(values.runs);
const aiderRuns = Number(values["aider-runs"]);
process.env.DRYDOCK_LOG_LEVEL ??= "warning";

const { Engine } = await import("../dist/engine/engine.js");
const { Session } = await import("../dist/session/session.js");
const { DrydockServer } = await import("../dist/server/drydock-server.js");
const { serverExtensions } = await import("../dist/server/extensions.js");
const { defaultSandboxImage } = await import("../dist/sandbox/sandbox-image.js");
const { resolveRuntime } = await import("../dist/sandbox/box-runtime.js");
const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");

const engine = await Engine.connect();
await resolveRuntime(engine, "runsc", "runsc (this benchmark compares it with runc)");
const image = await defaultSandboxImage(engine);
const root = mkdtempSync(join(tmpdir(), "drydock-bench-runtime-"));
const repo = makeRepo(root, 200);
const RUNTIMES = ["runc", "runsc"];
const rows = [];
const record = (what, results) => {
  for (const runtime of RUNTIMES) rows.push({ what, runtime, ...results[runtime] });
  const [a, b] = RUNTIMES.map((r) => results[r]);
  process.stderr.write(`${what}: runc ${a.median.toFixed(0)} ms, runsc ${b.median.toFixed(0)} ms\n`);
};
const each = (make) => Object.fromEntries(RUNTIMES.map((runtime) => [runtime, make(runtime)]));

try {
  // Session ready: a box made, the repository copied in, the shell started.
  record(
    "session ready",
    await interleaved(
      Math.max(5, Math.round(runs / 2)),
      each((runtime) => ({
        run: () => Session.create(engine, { repo, image, runtime }),
        after: (session) => session.destroy(),
      })),
    ),
  );

  const sessions = Object.fromEntries(
    await Promise.all(RUNTIMES.map(async (runtime) => [runtime, await Session.create(engine, { repo, image, runtime })])),
  );
  try {
    record("shell round trip (`true`)", await interleaved(runs * 2, each((r) => ({ run: () => sessions[r].bash("true") })), { warmup: 3 }));
    record(
      "git diff (2 files changed of 200)",
      await interleaved(
        runs,
        each((r) => ({
          before: (i) => sessions[r].bash(`echo ${i} >> pkg1/mod1.js; echo ${i} > new-${i}.txt`),
          run: () => sessions[r].diff(),
        })),
      ),
    );
  } finally {
    await Promise.all(Object.values(sessions).map((s) => s.destroy()));
  }

  // aider with the offline model, through each runtime's own server (its gateway and socket).
  const servers = {};
  const clients = {};
  const ids = {};
  for (const runtime of RUNTIMES) {
    servers[runtime] = await DrydockServer.start({
      repo,
      image,
      sessionOptions: { runtime },
      tasksDir: join(root, `tasks-${runtime}`),
      maxSessions: 4,
      tools: ["core", "aider"],
      ...(await serverExtensions({ llm: "offline" })),
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await servers[runtime].connectClient("bench").connect(serverSide);
    clients[runtime] = new Client({ name: "bench", version: "1" });
    await clients[runtime].connect(clientSide);
    const created = await clients[runtime].callTool({ name: "session_create", arguments: {} });
    ids[runtime] = created.structuredContent.session_id;
  }
  try {
    record(
      "aider run, offline model",
      await interleaved(
        aiderRuns,
        each((r) => ({
          run: async () => {
            const reply = await clients[r].callTool(
              {
                name: "aider_ai_code",
                arguments: {
                  session_id: ids[r],
                  ai_coding_prompt: "no rule matches this prompt",
                  relative_editable_files: ["pkg1/mod1.js"],
                },
              },
              undefined,
              { timeout: 300_000 },
            );
            if (reply.isError) throw new Error(`aider under ${r}: ${reply.content[0]?.text}`);
          },
        })),
      ),
    );
  } finally {
    for (const runtime of RUNTIMES) {
      await clients[runtime]?.close();
      await servers[runtime]?.shutdown();
    }
  }
} finally {
  removeDir(root);
}

const ms = (v) => (v < 100 ? v.toFixed(1) : v.toFixed(0));
const lines = ["| what | runtime | median ms | p10 | p90 | n |", "|---|---|---:|---:|---:|---:|"];
for (const r of rows) lines.push(`| ${r.what} | ${r.runtime} | ${ms(r.median)} | ${ms(r.p10)} | ${ms(r.p90)} | ${r.n} |`);
process.stdout.write(lines.join("\n") + "\n");
if (values.out) {
  writeFileSync(values.out, JSON.stringify({ date: new Date().toISOString(), image, rows }, null, 2) + "\n");
  process.stderr.write(`written to ${values.out}\n`);
}
