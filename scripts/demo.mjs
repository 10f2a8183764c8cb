#!/usr/bin/env node
// The demo's client half: start `drydock serve` on a repository over stdio, ask aider in the box
// to fix the sample repository, print the diff, apply it to a branch and run the tests there.
// Usage: node scripts/demo.mjs REPO [IMAGE]   (scripts/demo.sh prepares both)
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const [repo, image] = process.argv.slice(2);
if (!repo) {
  console.error("usage: node scripts/demo.mjs REPO [IMAGE]");
  process.exit(2);
}
const BRANCH = "drydock/demo";
const PROMPT = "Make greet() return 'Hello, NAME!' so the tests pass";
const say = (text) => console.log(`\n== ${text}`);

const keyNames = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"];
const key = keyNames.find((name) => process.env[name]);
say(
  key
    ? `${key} is set: aider uses the real model through drydock's gateway (the key stays on this host)`
    : "no provider key set: the demo asks for drydock's offline model (--llm offline), which knows this sample repository (set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY to use a real one)",
);

const log = join(dirname(repo), "drydock-serve.log");
const transport = new StdioClientTransport({
  command: process.execPath,
  // Without a key the offline model is asked for: drydock never falls back to it on its own.
  args: [
    join(root, "dist", "cli", "main.js"),
    "serve",
    "--repo",
    repo,
    ...(image ? ["--image", image] : []),
    ...(key ? [] : ["--llm", "offline"]),
    // The default set has no aider_ai_code: the demo asks for it beside the core tools.
    "--tools",
    "core,aider",
  ],
  env: { ...process.env },
  stderr: "pipe",
});
transport.stderr?.pipe(createWriteStream(log));
const client = new Client({ name: "drydock-demo", version: "1" });

function reply(result) {
  const text = result.content?.[0]?.text ?? "";
  if (result.isError) throw new Error(text);
  return result.structuredContent;
}

function runTests(ref) {
  const dir = mkdtempSync(join(tmpdir(), "drydock-demo-check-"));
  try {
    const clone = spawnSync("git", ["clone", "-q", "--branch", ref, repo, dir], { encoding: "utf8" });
    if (clone.status !== 0) throw new Error(`git clone of ${ref} failed: ${clone.stderr}`);
    const test = spawnSync("python3", ["-m", "unittest", "-q"], { cwd: dir, encoding: "utf8" });
    if (test.error) return { ok: false, summary: `python3 could not run (${test.error.message})` };
    const summary = test.stderr.trim().split("\n").filter(Boolean).pop() ?? "";
    return { ok: test.status === 0, summary };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  await client.connect(transport);
  const before = runTests("main");
  say(`the sample repository's tests on main: ${before.ok ? "pass" : "fail"} (${before.summary})`);

  say(`aider_ai_code: "${PROMPT}" (editable greet.py, read-only test_greet.py)`);
  const started = Date.now();
  const result = reply(
    await client.callTool(
      {
        name: "aider_ai_code",
        arguments: {
          ai_coding_prompt: PROMPT,
          relative_editable_files: ["greet.py"],
          relative_readonly_files: ["test_greet.py"],
        },
      },
      undefined,
      {
        timeout: 600_000,
        resetTimeoutOnProgress: true,
        onprogress: (p) => p.message && console.log(`   aider | ${p.message}`),
      },
    ),
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  say(
    `aider ${result.success ? "succeeded" : "failed"} in ${seconds} s with ${result.model}: ` +
      `${result.llm_requests} model call(s), ${result.tokens.input} tokens in, ${result.tokens.output} out, $${result.cost_usd.toFixed(4)}`,
  );
  if (!result.success) {
    process.stdout.write(`${result.diff}\n`);
    throw new Error("aider did not make the change; see the message above");
  }
  process.stdout.write(result.diff);

  say(`session_apply: a commit on branch ${BRANCH}; the working tree of ${repo} is not touched`);
  const applied = reply(await client.callTool({ name: "session_apply", arguments: { branch: BRANCH } }));
  console.log(`   ${applied.message}`);

  const after = runTests(BRANCH);
  say(`the tests on ${BRANCH}: ${after.ok ? "pass" : "fail"} (${after.summary})`);
  if (!after.ok) throw new Error(`the tests fail on ${BRANCH}`);

  say("done");
  console.log(`   repository: ${repo}`);
  console.log(`   branch:     ${BRANCH} (commit ${String(applied.commit).slice(0, 12)})`);
  console.log(`   look at it: git -C ${repo} show ${BRANCH}`);
  console.log(`   server log: ${log}`);
} catch (error) {
  console.error(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}`);
  console.error(`drydock's log: ${log}`);
  process.exitCode = 1;
} finally {
  await client.close();
}
