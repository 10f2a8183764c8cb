import { describe, expect, it } from "vitest";
import { htmlReport, scriptSafeJson } from "../../../src/eval/html-report.js";
import { buildResults } from "../../../src/eval/results-summary.js";
import { attempt, runInfo } from "./fixtures.js";

describe("htmlReport", () => {
  const results = buildResults(runInfo(["a", "b"]), [attempt("a", "resolved"), attempt("b", "unresolved")]);
  const html = htmlReport(results, {
    "a#1": { diff: "+</script><script>alert(1)</script>\n", agentLog: "log \u2028 line", testOutput: "ok" },
  });

  it("embeds the data so that no text can close the script element", () => {
    const scripts = html.match(/<\/script>/g) ?? [];
    expect(scripts).toHaveLength(2);
    const json = /<script type="application\/json" id="eval-data">(.*?)<\/script>/s.exec(html)![1]!;
    const data = JSON.parse(json) as { texts: Record<string, { diff: string; agentLog: string }> };
    expect(data.texts["a#1"]!.diff).toBe("+</script><script>alert(1)</script>\n");
    expect(data.texts["a#1"]!.agentLog).toBe("log \u2028 line");
  });

  it("loads nothing from elsewhere and forbids it with a content security policy", () => {
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/<link\b|@import|url\(/i);
    expect(html).toContain("default-src 'none'");
  });

  it("puts the resolved count in the title", () => {
    expect(html).toContain("<title>drydock eval — patch: 1/2 resolved</title>");
  });
});

describe("scriptSafeJson", () => {
  it("escapes <, U+2028 and U+2029 and stays valid JSON", () => {
    const text = scriptSafeJson({ s: "</script>\u2028\u2029" });
    expect(text).not.toMatch(/<|\u2028|\u2029/);
    expect(JSON.parse(text)).toEqual({ s: "</script>\u2028\u2029" });
  });
});
