import { describe, expect, it } from "vitest";
import {
  formatProblem,
  parseJsonlTasks,
  parseYamlTasks,
  rejectDuplicateIds,
} from "../../../src/eval/task-parse.js";

const good = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, repo: "repo", prompt: "fix it", test_cmd: "make test", ...extra });

describe("parseJsonlTasks", () => {
  it("reports each bad line with its number and field while the good lines parse", () => {
    const text = [
      good("a"),
      "",
      "# a comment",
      JSON.stringify({ id: "b", repo: "repo", prompt: "x" }),
      "{not json",
      good("c", { timeout_s: -5 }),
      good("d", { fail_to_pass: ["t1", 3] }),
      good("e"),
    ].join("\n");
    const parsed = parseJsonlTasks(text, "tasks.jsonl");
    expect(parsed.tasks.map((t) => [t.task.id, t.line])).toEqual([
      ["a", 1],
      ["e", 8],
    ]);
    expect(parsed.problems.map(formatProblem)).toEqual([
      "tasks.jsonl:4: test_cmd: is required",
      expect.stringMatching(/^tasks\.jsonl:5: \(json\): not valid JSON/),
      expect.stringMatching(/^tasks\.jsonl:6: timeout_s: /),
      expect.stringMatching(/^tasks\.jsonl:7: fail_to_pass\[1\]: /),
    ]);
  });

  it("takes a task's pull mode, and names the field and its values when it is not one", () => {
    const parsed = parseJsonlTasks(
      [good("a", { image: "127.0.0.1:5000/py:1", pull: "never" }), good("b", { pull: "sometimes" })].join(
        "\n",
      ),
      "tasks.jsonl",
    );
    expect(parsed.tasks.map((t) => [t.task.id, t.task.pull])).toEqual([["a", "never"]]);
    expect(parsed.problems.map(formatProblem)).toEqual([
      'tasks.jsonl:2: pull: must be "missing", "always" or "never"',
    ]);
  });

  it("refuses ids that cannot name a folder", () => {
    const parsed = parseJsonlTasks([good("../up"), good("has space"), good("ok.id_1-2")].join("\n"), "t");
    expect(parsed.tasks.map((t) => t.task.id)).toEqual(["ok.id_1-2"]);
    expect(parsed.problems.map((p) => [p.line, p.field])).toEqual([
      [1, "id"],
      [2, "id"],
    ]);
  });

  it("accepts SWE-bench's test lists stored as JSON text, and warns about fields it does not know", () => {
    const parsed = parseJsonlTasks(
      good("swe", {
        FAIL_TO_PASS: "x",
        fail_to_pass: '["t::a", "t::b"]',
        pass_to_pass: "[]",
        problem_statement: "…",
      }),
      "swe.jsonl",
    );
    expect(parsed.problems).toEqual([]);
    expect(parsed.tasks[0]!.task.fail_to_pass).toEqual(["t::a", "t::b"]);
    expect(parsed.tasks[0]!.task.pass_to_pass).toEqual([]);
    expect(parsed.warnings.map(formatProblem)).toEqual([
      "swe.jsonl:1: FAIL_TO_PASS, problem_statement: not a task field; ignored",
    ]);
  });

  it("names a value that is not an object", () => {
    expect(parseJsonlTasks("[1,2]", "t").problems[0]).toMatchObject({ line: 1, field: "(task)" });
  });
});

describe("parseYamlTasks", () => {
  it("reads one task, a list, or several documents, with the line of a bad field", () => {
    const one = parseYamlTasks("id: a\nrepo: r\nprompt: p\ntest_cmd: t\n", "a.yaml");
    expect(one.tasks.map((t) => t.task.id)).toEqual(["a"]);
    const list = parseYamlTasks(
      [
        "- id: a",
        "  repo: r",
        "  prompt: p",
        "  test_cmd: t",
        "- id: b",
        "  repo: r",
        "  prompt: p",
        "  test_cmd: t",
        "  timeout_s: soon",
      ].join("\n"),
      "list.yaml",
    );
    expect(list.tasks.map((t) => t.task.id)).toEqual(["a"]);
    expect(list.problems.map((p) => [p.line, p.field])).toEqual([[9, "timeout_s"]]);
    const docs = parseYamlTasks(
      "id: a\nrepo: r\nprompt: p\ntest_cmd: t\n---\nid: b\nrepo: r\nprompt: p\n",
      "d.yaml",
    );
    expect(docs.tasks.map((t) => t.task.id)).toEqual(["a"]);
    expect(docs.problems).toEqual([
      { source: "d.yaml", line: 6, field: "test_cmd", message: "is required", id: "b" },
    ]);
  });

  it("reports YAML syntax errors with their line", () => {
    const parsed = parseYamlTasks("id: a\nrepo: [unclosed\nprompt: p\n", "bad.yaml");
    expect(parsed.tasks).toEqual([]);
    expect(parsed.problems[0]).toMatchObject({ source: "bad.yaml", field: "(yaml)" });
    expect(parsed.problems[0]!.line).toBeGreaterThanOrEqual(2);
  });

  it("keeps multi-line prompts and setup scripts as written", () => {
    const parsed = parseYamlTasks(
      "id: a\nrepo: r\nprompt: |\n  line one\n  line two\nsetup: pip install -e .\ntest_cmd: pytest -q\n",
      "a.yaml",
    );
    expect(parsed.tasks[0]!.task.prompt).toBe("line one\nline two");
  });
});

describe("rejectDuplicateIds", () => {
  it("keeps the first task of an id and reports the later ones where they are", () => {
    const parsed = rejectDuplicateIds(
      parseJsonlTasks([good("a"), good("b"), good("a")].join("\n"), "t.jsonl"),
    );
    expect(parsed.tasks.map((t) => t.line)).toEqual([1, 2]);
    expect(parsed.problems.map(formatProblem)).toEqual([
      't.jsonl:3: id: "a" is already used at t.jsonl:1; ids must be unique',
    ]);
  });
});
