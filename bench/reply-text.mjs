// What the tool replies of a typical agent session cost a model's context: the `content` text the
// server sends now (written for the model) beside the JSON text of the same replies (what
// `content` held before: the result object as JSON, which is `structuredContent`). Counted, not
// timed: one run gives the figure. Needs the engine and the sandbox image (`npm run build`,
// `drydock image build`).
//
//   node bench/reply-text.mjs              prints the table
//   node bench/reply-text.mjs --out FILE   also writes the figures as JSON to FILE
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";


const files = {
  "calc.py":
    "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n" +
    Array.from({ length: 40 }, (_, i) => `\n\ndef f${i}(x):\n    return x + ${i}\n`).join(""),
  "test_calc.py":
    "import unittest\nfrom calc import add, mul\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\nif __name__ == '__main__':\n    unittest.main()\n",
  "README.md": "# calc\n\nA small calculator.\n",
};

// The calls an agent makes to find, fix and check a bug: look around, read, run the tests, edit,
// run them again, review the diff, finish.
const script = [
  ["bash", { command: "ls -la && git log --oneline | head -5" }],
  ["code_search", { command: "search_function", identifier: "add" }],
  ["file_editor", { operation: "view", path: "calc.py", view_range: [1, 12] }],
  ["bash", { command: "python3 -m unittest -v 2>&1 | tail -20" }],
  ["file_editor", { operation: "replace", path: "calc.py", old_string: "return a - b", new_string: "return a + b" }],
  ["bash", { command: "python3 -m unittest -v" }],
  ["git_diff", {}],
  ["bash", { command: "git status --short" }],
  ["task_done", { summary: "add() fixed" }],
];

const repo = mkdtempSync(join(tmpdir(), "drydock-bench-reply-"));
for (const [name, body] of Object.entries(files)) writeFileSync(join(repo, name), body);
const git = (...a) => execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@drydock.invalid", ...a], { cwd: repo });
git("init", "-q", "-b", "main");
git("add", "-A");
git("commit", "-q", "-m", "calc");
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [join(import.meta.dirname, "../dist/cli/main.js"), "serve", "--repo", repo, "--pool", "0"],
  env: { ...process.env },
  stderr: "ignore",
});
const client = new Client({ name: "bench-reply-text", version: "1" });
const rows = [];
try {
  await client.connect(transport);
  for (const [name, args] of script) {
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 300_000 });
    if (r.isError) throw new Error(`${name}: ${r.content?.[0]?.text}`);
    const text = r.content[0].text;
    const json = JSON.stringify(r.structuredContent);
    rows.push({ tool: name, text_bytes: Buffer.byteLength(text), json_bytes: Buffer.byteLength(json) });
  }
} finally {
  await client.close().catch(() => undefined);
  rmSync(repo, { recursive: true, force: true });
}

const sum = (key) => rows.reduce((t, r) => t + r[key], 0);
const total = { text_bytes: sum("text_bytes"), json_bytes: sum("json_bytes") };
console.log("call              text bytes  JSON bytes");
for (const r of rows) console.log(`${r.tool.padEnd(16)}  ${String(r.text_bytes).padStart(10)}  ${String(r.json_bytes).padStart(10)}`);
console.log(`${"session".padEnd(16)}  ${String(total.text_bytes).padStart(10)}  ${String(total.json_bytes).padStart(10)}`);
console.log(
  `~tokens (bytes/4): ${Math.round(total.text_bytes / 4)} as text, ${Math.round(total.json_bytes / 4)} as JSON (${Math.round((100 * (total.json_bytes - total.text_bytes)) / total.json_bytes)}% fewer)`,
);
const out = process.argv.indexOf("--out");
if (out > 0) writeFileSync(process.argv[out + 1], JSON.stringify({ rows, total }, null, 2));
