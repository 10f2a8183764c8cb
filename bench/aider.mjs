// aider_ai_code with the offline model, in the box through drydock (gateway, relay, aider, diff),
// against the same aider run on the host: aider-chat==0.86.2 in a venv under bench/.cache, talking
// to the same offline model served by `drydock mock-llm`, then `git diff`.
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { git } from "./lib/repos.mjs";
import { timed } from "./lib/stats.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist/cli/main.js");
const AIDER_VERSION = "0.86.2";
const PROMPT = "Make greet() return 'Hello, NAME!' so the tests pass";

/** aider in the bench's own venv, installed with pip on first use. */
export function ensureHostAider(say) {
  const venv = join(root, "bench/.cache/aider-venv");
  const aider = join(venv, "bin/aider");
  const version = () => {
    try {
      return execFileSync(join(venv, "bin/python"), ["-c", "import importlib.metadata as m; print(m.version('aider-chat'))"], {
        encoding: "utf8",
      }).trim();
    } catch {
      return "";
    }
  };
  if (existsSync(aider) && version() === AIDER_VERSION) return { aider, venv };
  say(`installing aider-chat==${AIDER_VERSION} into ${venv} (once; a few minutes)`);
  execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
  execFileSync(join(venv, "bin/pip"), ["install", "-q", `aider-chat==${AIDER_VERSION}`], { stdio: "inherit" });
  if (version() !== AIDER_VERSION) throw new Error(`aider-chat ${AIDER_VERSION} did not install into ${venv}`);
  return { aider, venv };
}

function sampleRepo(tmp) {
  const dir = mkdtempSync(join(tmp, "sample-"));
  cpSync(join(root, "examples/sample-repo"), dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "sample");
  return dir;
}

/** `drydock mock-llm` on a free port; resolves with its URL and a stop function. */
function mockLlm() {
  const child = spawn(process.execPath, [cli, "mock-llm", "--port", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
      const url = /listening on (\S+)/.exec(err)?.[1];
      if (url) resolve({ url, stop: () => child.kill("SIGTERM") });
    });
    child.on("exit", (code) => reject(new Error(`drydock mock-llm exited (${code}): ${err}`)));
  });
}

function runProcess(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} exited ${code}: ${out.slice(-2000)}`))));
  });
}

export async function aiderRun(ctx) {
  const { buildAiderArgv } = await import("../dist/tools/aider/aider-argv.js");
  const { aiderEnv, OFFLINE_AIDER_MODEL, OFFLINE_MODEL_METADATA } = await import("../dist/gateway/index.js");
  const runs = Math.max(1, Math.min(10, ctx.runs));
  const { aider, venv } = ensureHostAider(ctx.say);

  // On the host: the same flags and environment aider gets in the box, the model behind mock-llm.
  const hostRepo = sampleRepo(ctx.tmp);
  const home = mkdtempSync(join(ctx.tmp, "aider-home-"));
  const runDir = join(home, "run");
  mkdirSync(join(home, ".aider/caches"), { recursive: true });
  mkdirSync(runDir, { recursive: true });
  const [prices] = execFileSync("sh", ["-c", `ls ${venv}/lib/python3*/site-packages/litellm/model_prices_and_context_window_backup.json`], {
    encoding: "utf8",
  }).split("\n");
  copyFileSync(prices, join(home, ".aider/caches/model_prices_and_context_window.json"));
  const metadata = join(home, "offline-model-metadata.json");
  writeFileSync(metadata, JSON.stringify(OFFLINE_MODEL_METADATA));
  const mock = await mockLlm();
  const choice = { model: OFFLINE_AIDER_MODEL, provider: "offline", offline: true, reason: "bench" };
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    ...aiderEnv({ port: 0, choice, modelMetadataFile: metadata }),
    OPENAI_API_BASE: mock.url,
  };
  let host;
  try {
    host = await timed(
      runs,
      async (_, i) => {
        const argv = buildAiderArgv({
          model: choice.model,
          prompt: PROMPT,
          editable: ["greet.py"],
          readonly: ["test_greet.py"],
          options: {},
          runDir,
          runId: `bench-${i}`,
        });
        await runProcess(aider, argv.slice(1), { cwd: hostRepo, env });
        const diff = git(hostRepo, "diff").toString("utf8");
        if (!diff.includes("Hello, {name}!")) throw new Error(`host aider made no change:\n${diff}`);
      },
      {
        after: () => {
          git(hostRepo, "checkout", "-q", "--", ".");
          git(hostRepo, "clean", "-qfd");
        },
      },
    );
  } finally {
    mock.stop();
  }

  // In the box: drydock serve with the offline model, aider_ai_code on the same repository.
  const boxRepo = sampleRepo(ctx.tmp);
  const serverEnv = Object.fromEntries(
    Object.entries(process.env).filter(([k, v]) => v !== undefined && !/_API_KEY$|^DRYDOCK_(MODEL|LLM)$/.test(k)),
  );
  const client = new Client({ name: "drydock-bench", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [
        ...[cli, "serve", "--repo", boxRepo, "--image", ctx.image],
        ...["--llm", "offline", "--pool", "0", "--tools", "core,aider"],
      ],
      env: serverEnv,
      stderr: "ignore",
    }),
  );
  const call = async (name, args) => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
    const text = result.content?.[0]?.text ?? "";
    if (result.isError) throw new Error(`${name}: ${text}`);
    return result.structuredContent;
  };
  let box;
  try {
    await call("bash", { command: "true" });
    box = await timed(
      runs,
      async () => {
        const reply = await call("aider_ai_code", {
          ai_coding_prompt: PROMPT,
          relative_editable_files: ["greet.py"],
          relative_readonly_files: ["test_greet.py"],
        });
        if (!reply.success || !reply.diff.includes("Hello, {name}!")) throw new Error(`aider in the box: ${JSON.stringify(reply)}`);
      },
      { after: () => call("bash", { command: "git checkout -q -- . && git clean -qfd" }) },
    );
  } finally {
    await client.close();
  }
  ctx.row("aider (offline model)", "aider_ai_code in the box", box, "the same aider run on the host", host);
}
