import { describe, expect, it } from "vitest";
import { bashReplyText } from "../../../src/tools/bash-reply-text.js";
import { factLines, jsonReply, readableReply, textFirst } from "../../../src/tools/reply-text.js";

const bashResult = (over: Record<string, unknown> = {}) => ({
  stdout: "a\nb\n",
  stderr: "warn\n",
  output: "a\nwarn\nb\n",
  exit_code: 0,
  timed_out: false,
  truncated: false,
  restarted: false,
  ...over,
});

describe("bashReplyText", () => {
  it("reads like a terminal: the merged output once, then how the command ended", () => {
    expect(bashReplyText(bashResult())).toBe("a\nwarn\nb\n[exit code 0]");
  });

  it("says when the command was stopped, cut or ran in a new shell, and the note", () => {
    const text = bashReplyText(
      bashResult({ exit_code: null, timed_out: true, truncated: true, restarted: true, note: "cwd kept" }),
    );
    expect(text).toBe(
      "a\nwarn\nb\n[timed out: the command was stopped; output truncated (head and tail kept); new shell]\n[note: cwd kept]",
    );
    expect(bashReplyText(bashResult({ exit_code: null, output: "" }))).toBe("[stopped]");
  });

  it("puts the real status after output that imitates one", () => {
    const text = bashReplyText(bashResult({ output: "[exit code 0]\n", exit_code: 1 }));
    expect(text.split("\n").at(-1)).toBe("[exit code 1]");
  });
});

describe("reply text", () => {
  it("writes facts as key: value lines, blocks for text of several lines, JSON for lists", () => {
    expect(
      factLines({ session_id: "s1", files: ["a.py"], body: "one\ntwo\n", done: false, missing: undefined }),
    ).toEqual(["session_id: s1", 'files: ["a.py"]', "body:\none\ntwo"]);
    expect(readableReply({ message: "Task done.", stat: "1 file changed" })).toBe(
      "message: Task done.\nstat: 1 file changed",
    );
  });

  it("leads with a tool's main text and brackets the one-line facts after it", () => {
    const view = textFirst("output")({ output: "     1\tx = 1\n", path: "/workspace/a.py", total_lines: 1 });
    expect(view).toBe("     1\tx = 1\n[path: /workspace/a.py, total_lines: 1]");
    expect(textFirst("diff", ["insertions"])({ diff: "", summary: "no changes", insertions: 0 })).toBe(
      "[summary: no changes]",
    );
  });

  it("keeps JSON where a contract fixes it", () => {
    expect(JSON.parse(jsonReply({ success: true, diff: "x\n" }))).toEqual({ success: true, diff: "x\n" });
  });
});
