import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { formatAuditEntry } from "../../../src/cli/audit-lines.js";
import { renderSessionFacts, type SessionFacts } from "../../../src/cli/session-show.js";
import { textTable } from "../../../src/cli/text-table.js";
import { ProgressLine } from "../../../src/eval/progress-line.js";
import type { AuditEntry } from "../../../src/session/audit-entry.js";

/** What an agent can put in a command: a screen clear, a title, a clipboard write, a line drawn over, a C1 CSI, a bidi override. */
const HOSTILE = "ls\x1b[2J\x1b]0;owned\x07\x1b]52;c;ZXZpbA==\x07\rrm -rf ~\u009b31m\u202eexe.txt";
/** Anything a terminal acts on rather than shows, other than the newlines drydock itself prints. */
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

const entry = (command: string): AuditEntry => ({
  ts: "2026-01-02T03:04:05.678Z",
  session: "0123456789ab",
  actor: "agent",
  tool: "bash",
  args: { command },
  outcome: { ok: false, exit_code: 1, error: "failed:\x1b[5m blink" },
  duration_ms: 12,
  output_bytes: 3,
});

describe("agent-written text printed for a person", () => {
  it("a log line shows a hostile command escaped, on one line", () => {
    const line = formatAuditEntry(entry(HOSTILE));
    expect(line).not.toMatch(RAW);
    expect(line).not.toContain("\n");
    expect(line).toContain("ls\\e[2J\\e]0;owned\\x07\\e]52;c;ZXZpbA==\\x07\\rrm -rf ~\\x9b31m\\u202eexe.txt");
  });

  it("an error in a log line is escaped too", () => {
    const line = formatAuditEntry({ ...entry("x"), outcome: { ok: false, error: "bad\x1b]0;t\x07" } });
    expect(line).toContain("error: bad\\e]0;t\\x07");
  });

  it("a table escapes every cell and keeps its columns aligned on what is shown", () => {
    const table = textTable([
      ["A", "B"],
      [HOSTILE, "x"],
      ["title\nwith a line", "y"],
    ]);
    expect(table).not.toMatch(RAW);
    const lines = table.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(/^title\\nwith a line +y$/);
    expect(lines[1]!.indexOf(" x")).toBe(lines[2]!.indexOf(" y"));
  });

  it("`sessions show` escapes the task stack, the record and the last commands", () => {
    const facts: SessionFacts = {
      session_id: "0123456789ab",
      box: { id: "abcdef012345", state: "running" },
      owner: null,
      owner_alive: null,
      record: null,
      audit_log: "/state/audit/0123456789ab.jsonl",
      calls: 1,
      cost: { llm_requests: 0, refused: 0, input_tokens: 0, output_tokens: 0, usd: 0 },
      last_commands: [entry(HOSTILE)],
      task_stack: {
        tasks: 1,
        open: 1,
        current: `Fix it${HOSTILE}`,
        outline: `▶ Fix it${HOSTILE}\n`,
      } as SessionFacts["task_stack"],
      task_stack_problem: "damaged\x1b[2J",
    };
    const text = renderSessionFacts(facts);
    expect(text).not.toMatch(RAW);
    expect(text).toContain("current: Fix itls\\e[2J");
    expect(text).toContain("warning: damaged\\e[2J");
  });

  it("an eval note is escaped; the progress bar's own redraw is drydock's and stays", () => {
    const stream = Object.assign(new PassThrough(), { isTTY: true });
    let written = "";
    stream.on("data", (d: Buffer) => (written += d.toString()));
    const progress = new ProgressLine(stream, true);
    progress.note(`[eval] task ${HOSTILE}`);
    progress.stop();
    expect(written.startsWith("\r\x1b[2K")).toBe(true);
    expect(written).toContain("[eval] task ls\\e[2J");
    expect(written.replace("\r\x1b[2K", "")).not.toMatch(/\x1b|\x07|\u009b|\u202e/);
  });
});
