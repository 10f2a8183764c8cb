import { afterAll, describe, expect, it } from "vitest";
import {
  ctagsCommand,
  ctagsForIdentifierCommand,
  searchWord,
  shellQuote,
} from "../../../src/tools/search/ctags-command.js";
import { parseCtagsJson } from "../../../src/tools/search/ctags-json.js";
import { run, writeFixtures } from "./fixtures.js";

describe("ctagsCommand with universal-ctags", () => {
  const { root, cleanup } = writeFixtures();
  afterAll(cleanup);

  it("indexes every language with lines, ends, scopes and languages", () => {
    const definitions = parseCtagsJson(run(ctagsCommand(root)));
    const languages = new Set(definitions.map((d) => d.language));
    for (const language of ["TypeScript", "JavaScript", "Python", "Go", "Rust", "Java", "C", "C++"]) {
      expect(languages).toContain(language);
    }
    expect(definitions).toContainEqual(
      expect.objectContaining({
        name: "Start",
        kind: "func",
        path: `${root}/go/server.go`,
        line: 11,
        end: 13,
        scope: "main.Server",
        scopeKind: "struct",
        language: "Go",
        signature: "()",
      }),
    );
  });

  it("skips node_modules and .git", () => {
    const paths = parseCtagsJson(run(ctagsCommand(root))).map((d) => d.path);
    expect(paths.some((p) => p.includes("node_modules") || p.includes(".git"))).toBe(false);
  });

  it("restricts to the languages asked for, whatever their case", () => {
    const definitions = parseCtagsJson(run(ctagsCommand(root, ["python", "Go"])));
    expect(new Set(definitions.map((d) => d.language))).toEqual(new Set(["Python", "Go"]));
    expect(() => ctagsCommand(root, ["Cobol"])).toThrow(/^languages: "Cobol" is not one of/);
  });

  it("indexes only files holding the identifier with the grep pipeline", () => {
    const definitions = parseCtagsJson(run(ctagsForIdentifierCommand(root, "Greeter.greet")));
    expect(new Set(definitions.map((d) => d.path))).toEqual(new Set([`${root}/web/greeter.ts`]));
    expect(parseCtagsJson(run(ctagsForIdentifierCommand(root, "nothing_has_this_name")))).toEqual([]);
  });

  it("keeps a root that starts with a dash from being read as an option", () => {
    expect(ctagsCommand("-x").at(-1)).toBe("./-x");
  });
});

describe("shell quoting", () => {
  it("quotes what a shell would interpret", () => {
    expect(shellQuote("plain/path-1.ts")).toBe("plain/path-1.ts");
    expect(shellQuote("it's $(rm -rf /)")).toBe(`'it'\\''s $(rm -rf /)'`);
    expect(run(["sh", "-c", `printf %s ${shellQuote("a'b $HOME `x`")}`])).toBe("a'b $HOME `x`");
  });

  it("searches for the last part of a qualified identifier", () => {
    expect(searchWord("geo::Circle.area")).toBe("area");
    expect(searchWord("Widget#render")).toBe("render");
    expect(searchWord("plain")).toBe("plain");
  });
});

describe("parseCtagsJson", () => {
  it("keeps tags, drops pseudo tags and junk, and unescapes patterns", () => {
    const output = [
      '{"_type": "ptag", "name": "JSON_OUTPUT_VERSION", "path": "0.0", "pattern": "in development"}',
      '{"_type": "tag", "name": "f", "path": "./a/b.js", "pattern": "/^const f = x => x \\/ 2;$/", "language": "JavaScript", "line": 3, "kind": "constant", "end": 2}',
      "ctags: Warning: something",
      "{not json",
      '{"_type": "tag", "name": "g", "path": "a.c", "line": 0, "kind": "function"}',
      "",
    ].join("\n");
    expect(parseCtagsJson(output)).toEqual([
      {
        name: "f",
        kind: "constant",
        path: "a/b.js",
        line: 3,
        language: "JavaScript",
        pattern: "const f = x => x / 2;",
      },
    ]);
  });
});
