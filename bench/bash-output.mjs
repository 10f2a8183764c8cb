// 1 MB of output through the bash tool as an outside MCP client sees it (`drydock serve --http`,
// the SDK's Streamable HTTP client), against `docker exec` of the same command in the same box,
// in one interleaved loop; and how many bytes the reply put on the wire. Needs `npm run build`
// and the sandbox image.
//
//   node bench/bash-output.mjs               prints the figures (BENCH_RUNS=N rounds, default 20)
//   node bench/bash-output.mjs --out FILE    also writes them as JSON to FILE
//   BENCH_BASELINE_DIST=DIR                  also another build's server (its dist/), in the same loop
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { makeRepo, removeDir } from "./lib/repos.mjs";
import { compare, interleaved } from "./lib/stats.mjs";

export const MB_COMMAND =
  "yes 'drydock benchmark output: a line of text, seventy bytes or so long' | head -c 1000000";
const MAX_OUTPUT_BYTES = 2_000_000;

/** Starts `drydock serve --http` on a free port; resolves with the child and its MCP URL. */
async function serve(repo, stateDir, token, dist = join(import.meta.dirname, "../dist")) {
  const child = spawn(
    process.execPath,
    [join(dist, "cli/main.js"), "serve", "--http", "--port", "0", "--repo", repo, "--pool", "0"],
    {
      env: { ...process.env, DRYDOCK_STATE_DIR: stateDir, DRYDOCK_TOKEN: token },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const url = await new Promise((resolve, reject) => {
    let err = "";
    child.stderr.on("data", (d) => {
      err += d.toString();
      const m = /serving MCP on (\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    child.on("exit", () => reject(new Error(`drydock serve exited: ${err}`)));
  });
  return { child, url };
}

/** An MCP client of the server at `url` that counts the bytes of every HTTP response body it reads. */
async function connect(url, token) {
  const counted = { bytes: 0 };
  const counting = async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    const counter = new TransformStream({
      transform(chunk, controller) {
        counted.bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(counter), response);
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: counting,
  });
  const client = new Client({ name: "bench-bash-output", version: "1" });
  await client.connect(transport);
  return { client, counted };
}

const LINE = "drydock benchmark output";

/**
 * The figures: the bash tool's 1 MB round trip for a client that takes the reply as any MCP client
 * does (text for its model beside structuredContent) and for one that reads only structuredContent
 * (`_meta` "drydock/reply": "structured", as drydock's own clients do), and `docker exec` of the
 * same command, in one interleaved loop; each reply's bytes on the wire and how many copies of
 * the output it holds.
 */
export async function bashOutput({ runs, repo, stateDir, baselineDist }) {
  const token = "bench-token-" + Math.random().toString(36).slice(2);
  const { child, url } = await serve(repo, stateDir, token);
  const children = [child];
  const clients = [];
  try {
    const plain = await connect(url, token);
    clients.push(plain.client);
    const structured = await connect(url, token);
    clients.push(structured.client);
    const call = async (c, args, meta) => {
      const r = await c.client.callTool(
        { name: "bash", arguments: args, ...(meta ? { _meta: meta } : {}) },
        undefined,
        {
          timeout: 300_000,
        },
      );
      if (r.isError) throw new Error(`bash: ${r.content?.[0]?.text}`);
      const out = r.structuredContent?.stdout;
      if (args.command === MB_COMMAND && (typeof out !== "string" || out.length !== 1_000_000)) {
        throw new Error(`the bash tool returned ${String(out).length} bytes of stdout`);
      }
      return r;
    };
    const meta = { "drydock/reply": "structured" };
    const box = String((await call(plain, { command: "cat /etc/hostname" })).structuredContent.stdout).trim();
    await call(structured, { command: "true" }, meta);
    const big = { command: MB_COMMAND, max_output_bytes: MAX_OUTPUT_BYTES };
    const wire = {};
    for (const [name, c, m] of [
      ["plain", plain, undefined],
      ["structured", structured, meta],
    ]) {
      const reply = await call(c, big, m);
      c.counted.bytes = 0;
      await call(c, big, m);
      const json = JSON.stringify(reply);
      wire[name] = { bytes: c.counted.bytes, copies: json.split(LINE).length - 1 };
    }
    const perOutput = (await call(plain, big)).structuredContent.stdout.split(LINE).length - 1;
    for (const w of Object.values(wire)) w.copies = Math.round((100 * w.copies) / perOutput) / 100;
    const cli = ["exec", "-u", "1000", "-w", "/workspace", box, "sh", "-c", MB_COMMAND];
    // Another build's server beside this one (BENCH_BASELINE_DIST), its reply taken as any client does.
    const baseline = {};
    if (baselineDist) {
      const other = await serve(repo, stateDir + "-baseline", token, baselineDist);
      children.push(other.child);
      const c = await connect(other.url, token);
      clients.push(c.client);
      await call(c, big);
      c.counted.bytes = 0;
      await call(c, big);
      wire.baseline = { bytes: c.counted.bytes };
      baseline.baseline = { run: () => call(c, big) };
    }
    const r = await interleaved(runs, {
      ...baseline,
      tool: { run: () => call(plain, big) },
      toolStructured: { run: () => call(structured, big, meta) },
      docker: {
        run: () => {
          const out = execFileSync("docker", cli, { maxBuffer: 1 << 24 });
          if (out.length !== 1_000_000) throw new Error(`docker exec returned ${out.length} bytes`);
        },
      },
    });
    return { ...r, wire };
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const c of children) {
      const exited = new Promise((resolve) => c.once("exit", resolve));
      c.kill("SIGTERM");
      await exited;
    }
  }
}

/** The `output` section of `npm run bench`: the figures above as rows beside `docker exec`. */
export async function bashOutputRows(ctx) {
  const r = await bashOutput({
    runs: ctx.runs,
    repo: ctx.repo(10),
    stateDir: join(ctx.tmp, "state-bash-output"),
  });
  const group = "bash tool over MCP (HTTP)";
  ctx.row(
    group,
    "1 MB of output, a client taking text and object",
    r.tool,
    "docker exec of the same command",
    r.docker,
  );
  ctx.row(
    group,
    "1 MB of output, a client taking structuredContent alone",
    r.toolStructured,
    "docker exec of the same command",
    r.docker,
  );
  ctx.say(
    `${group}: the reply is ${r.wire.plain.bytes} bytes (${r.wire.plain.copies} copies of the output) for text and object, ${r.wire.structured.bytes} (${r.wire.structured.copies}) for the object alone`,
  );
  ctx.results.series.bashOutputWire = r.wire;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.env.BENCH_RUNS ?? 20);
  const tmp = mkdtempSync(join(tmpdir(), "drydock-bench-output-"));
  const repo = makeRepo(tmp, 10);
  try {
    const baselineDist = process.env.BENCH_BASELINE_DIST;
    const r = await bashOutput({ runs, repo, stateDir: join(tmp, "state"), baselineDist });
    const fmt = (s) => `${s.median.toFixed(1)} ms (p10-p90 ${s.p10.toFixed(1)}-${s.p90.toFixed(1)})`;
    const ratio = (a) => {
      const ratios = a.samples.map((t, i) => t / r.docker.samples[i]).sort((x, y) => x - y);
      const at = (q) => ratios[Math.min(ratios.length - 1, Math.ceil(q * ratios.length) - 1)];
      const v = compare(a, r.docker);
      return `${(a.median / r.docker.median).toFixed(2)}x docker exec (per round ${at(0.5).toFixed(2)}, p10-p90 ${at(0.1).toFixed(2)}-${at(0.9).toFixed(2)}; ${v.verdict}, ${v.test})`;
    };
    console.log(
      `bash tool, any MCP client:        ${fmt(r.tool)}, ${ratio(r.tool)}; reply ${r.wire.plain.bytes} bytes, ${r.wire.plain.copies} copies of the output`,
    );
    console.log(
      `bash tool, structuredContent only: ${fmt(r.toolStructured)}, ${ratio(r.toolStructured)}; reply ${r.wire.structured.bytes} bytes, ${r.wire.structured.copies} copies`,
    );
    if (r.baseline) {
      console.log(
        `bash tool, ${baselineDist}: ${fmt(r.baseline)}, ${ratio(r.baseline)}; reply ${r.wire.baseline.bytes} bytes`,
      );
      for (const [name, a] of [
        ["text and object", r.tool],
        ["object alone", r.toolStructured],
      ]) {
        const v = compare(a, r.baseline);
        console.log(`  ${name} against that build: ${v.verdict} (${v.test})`);
      }
    }
    console.log(`docker exec of the same command:   ${fmt(r.docker)}`);
    const out = process.argv.indexOf("--out");
    if (out > 0)
      writeFileSync(
        process.argv[out + 1],
        JSON.stringify({ date: new Date().toISOString(), runs, ...r }, null, 2),
      );
  } finally {
    removeDir(tmp);
  }
}
