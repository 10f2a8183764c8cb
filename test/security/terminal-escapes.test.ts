/**
 * What an agent writes reaches a person's terminal only as visible text: a command holding a
 * screen clear, a title change, an OSC 52 clipboard write, a line drawn over with a lone CR, a C1
 * CSI and a bidi override, and a task titled the same way, are printed escaped by `sessions log`,
 * `sessions show`, `sessions list`, `tasks show` and `tasks list`; `--json` stays JSON.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
/** Each trick, in the form it reaches the log and in the form a person should see. */
const TRICKS = [
  ["\x1b[2J", "\\e[2J"],
  ["\x1b]0;owned\x07", "\\e]0;owned\\x07"],
  ["\x1b]52;c;ZWNobyBvd25lZA==\x07", "\\e]52;c;ZWNobyBvd25lZA==\\x07"],
  ["\rrm -rf ~ # looks like the command", "\\rrm -rf ~ # looks like the command"],
  ["\u009b31m", "\\x9b31m"],
  ["\u202etxt.exe", "\\u202etxt.exe"],
] as const;
const HOSTILE = TRICKS.map(([raw]) => raw).join("");
/** A task title must be one line: the same tricks but the CR. */
const TITLE = `Fix ${TRICKS.filter(([raw]) => !raw.startsWith("\r"))
  .map(([raw]) => raw)
  .join("")}`;
/** Bytes a terminal acts on: none may reach it from these verbs (their own newlines aside). */
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe("agent-written text on a person's terminal", () => {
  let repo: TempRepo;
  let state: string;
  let client: Client;
  let id: string;
  const env = () => ({ ...process.env, DRYDOCK_STATE_DIR: state }) as Record<string, string>;
  const drydock = async (...args: string[]) => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args], { env: env() });
    return stdout + stderr;
  };

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    client = new Client({ name: "escapes", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          cli,
          "serve",
          "--repo",
          repo.path,
          "--image",
          inject("sandboxImage"),
          "--pool",
          "0",
          "--tools",
          "all",
        ],
        env: env(),
        stderr: "ignore",
      }),
    );
    id = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
    ok(
      await client.callTool({
        name: "bash",
        arguments: { session_id: id, command: `echo '${HOSTILE}' > /dev/null` },
      }),
    );
    ok(
      await client.callTool({
        name: "create_new_task",
        arguments: { session_id: id, title: TITLE, body: `step ${HOSTILE}` },
      }),
    );
  });

  afterAll(async () => {
    await client?.close();
    repo?.[Symbol.dispose]();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  it("sessions log and sessions show print the command escaped", async () => {
    for (const args of [
      ["sessions", "log", id],
      ["sessions", "show", id],
    ]) {
      const out = await drydock(...args);
      expect(out, args.join(" ")).not.toMatch(RAW);
      expect(out, args.join(" ")).toContain(
        `echo '${TRICKS.map(([, shown]) => shown).join("")}' > /dev/null`,
      );
    }
  });

  it("sessions list and the task stack's verbs print nothing raw; the title shows escaped", async () => {
    const list = await drydock("sessions", "list");
    expect(list).toContain(id);
    expect(list).not.toMatch(RAW);
    for (const args of [
      ["tasks", "show", id],
      ["tasks", "list"],
      ["sessions", "show", id],
    ]) {
      const out = await drydock(...args);
      expect(out, args.join(" ")).not.toMatch(RAW);
      expect(out, args.join(" ")).toContain("Fix \\e[2J\\e]0;owned\\x07");
    }
  });

  it("--json keeps the log's text exact, as JSON escapes it", async () => {
    const lines = (await drydock("sessions", "log", id, "--json")).trimEnd().split("\n");
    const commands = lines.map((l) => (JSON.parse(l) as { args: { command?: string } }).args.command);
    expect(commands).toContain(`echo '${HOSTILE}' > /dev/null`);
  });
});
