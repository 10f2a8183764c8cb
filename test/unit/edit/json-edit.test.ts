import { describe, expect, it } from "vitest";
import { jsonAdd, jsonRemove, jsonSet, jsonView } from "../../../src/tools/edit/json-edit.js";
import { MAX_JSON_DEPTH } from "../../../src/tools/edit/json-document.js";
import { InvalidArgumentError, InvalidJsonError, LimitExceededError } from "../../../src/util/errors.js";

const pkg = `{
  "name": "demo",
  "version": "1.0.0",
  "scripts": {
    "test": "vitest"
  },
  "keywords": ["a", "b"],
  "items": [
    { "id": 1, "price": 5 },
    { "id": 2, "price": 50 },
    { "id": 3, "price": 7 }
  ]
}
`;

describe("jsonView", () => {
  it("returns the value of a single match", () => {
    const view = jsonView(pkg, "$.scripts.test");
    expect(view.matches).toEqual([{ path: "$['scripts']['test']", value: "vitest" }]);
    expect(view.text).toBe('"vitest"');
  });

  it("returns every match with its path, filters included", () => {
    const view = jsonView(pkg, "$.items[?(@.price < 10)].id");
    expect(view.matches.map((m) => m.value)).toEqual([1, 3]);
    expect(JSON.parse(view.text)).toEqual([
      { path: "$['items'][0]['id']", value: 1 },
      { path: "$['items'][2]['id']", value: 3 },
    ]);
  });

  it("supports recursive descent, wildcards, slices and key names", () => {
    expect(jsonView(pkg, "$..price").matches).toHaveLength(3);
    expect(jsonView(pkg, "$.keywords[*]").matches.map((m) => m.value)).toEqual(["a", "b"]);
    expect(jsonView(pkg, "$.items[-1:].id").matches[0]?.value).toBe(3);
    expect(jsonView(pkg, "$.scripts.*~").matches[0]?.value).toBe("test");
  });

  it("says when nothing matches", () => {
    expect(() => jsonView(pkg, "$.nope")).toThrow(/^json_path: \$\.nope matches nothing in the file/);
  });

  it("caps what a view returns", () => {
    const big = JSON.stringify({ blob: "x".repeat(300_000) });
    expect(() => jsonView(big, "$")).toThrow(LimitExceededError);
    expect(jsonView(big, "$.blob~").matches).toHaveLength(1);
  });

  it("views documents whose root is a falsy primitive", () => {
    expect(jsonView("null", "$").matches).toEqual([{ path: "$", value: null }]);
    expect(jsonView("0\n", "$").text).toBe("0");
  });
});

describe("jsonSet", () => {
  it("changes only the value, keeping every other byte (one-line objects and arrays too)", () => {
    const result = jsonSet(pkg, "$.version", "1.1.0");
    expect(result.text).toBe(pkg.replace('"1.0.0"', '"1.1.0"'));
    expect(result.changedPaths).toEqual(["$['version']"]);
    // Three values in one-line objects: three changed lines, nothing else.
    const prices = jsonSet(pkg, "$.items[*].price", 1).text;
    expect(prices).toBe(pkg.replace(/"price": \d+/g, '"price": 1'));
  });

  it("replaces every match", () => {
    const result = jsonSet(pkg, "$.items[*].price", 0);
    expect(JSON.parse(result.text).items.map((i: { price: number }) => i.price)).toEqual([0, 0, 0]);
    expect(result.changedPaths).toHaveLength(3);
  });

  it("replaces the whole document with $", () => {
    expect(jsonSet('{"a": 1}', "$", [1]).text).toBe("[1]");
  });

  it("keeps tab and 4-space indentation, CRLF endings, a missing final newline and a BOM", () => {
    expect(jsonSet('{\n\t"a": 1\n}\n', "$.a", 2).text).toBe('{\n\t"a": 2\n}\n');
    expect(jsonSet('{\n    "a": {\n        "b": 1\n    }\n}', "$.a.b", 2).text).toBe(
      '{\n    "a": {\n        "b": 2\n    }\n}',
    );
    expect(jsonSet('{\r\n  "a": 1\r\n}\r\n', "$.a", "x\ny").text).toBe('{\r\n  "a": "x\\ny"\r\n}\r\n');
    expect(jsonSet('\ufeff{"a":1}', "$.a", 2).text).toBe('\ufeff{"a":2}');
  });

  it("replaces nested matches without losing the outer replacement", () => {
    const text = '{"a": {"a": {"a": 1}}}';
    expect(JSON.parse(jsonSet(text, "$..a", 0).text)).toEqual({ a: 0 });
  });

  it("refuses a path matching nothing and returns no text", () => {
    expect(() => jsonSet(pkg, "$.missing", 1)).toThrow(InvalidArgumentError);
    expect(() => jsonSet(pkg, "$.missing", 1)).toThrow(/matches nothing.*Nothing was changed/);
  });

  it("requires a JSON value", () => {
    expect(() => jsonSet(pkg, "$.name", undefined)).toThrow(/^value: is required/);
    expect(() => jsonSet(pkg, "$.name", Number.NaN)).toThrow(/^value: .*NaN/);
    expect(() => jsonSet(pkg, "$.name", { when: new Date() })).toThrow(/^value: .*not plain JSON/);
  });

  it("refuses to edit through key names (~)", () => {
    expect(() => jsonSet(pkg, "$.scripts.*~", "x")).toThrow(/key names \(~\)/);
  });
});

describe("jsonAdd", () => {
  it("appends to arrays", () => {
    const result = jsonAdd(pkg, "$.keywords", "c");
    expect(JSON.parse(result.text).keywords).toEqual(["a", "b", "c"]);
    expect(result.changedPaths).toEqual(["$['keywords'][2]"]);
  });

  it("creates a missing key on the parent object", () => {
    const result = jsonAdd(pkg, "$.scripts.build", "tsc");
    expect(JSON.parse(result.text).scripts).toEqual({ test: "vitest", build: "tsc" });
    expect(result.changedPaths).toEqual(["$['scripts']['build']"]);
  });

  it("creates the key on every object the parent path selects", () => {
    const result = jsonAdd(pkg, "$.items[?(@.price > 6)].sale", true);
    const items = JSON.parse(result.text).items as { sale?: boolean }[];
    expect(items.map((i) => i.sale)).toEqual([undefined, true, true]);
  });

  it("appends at an index equal to the array length", () => {
    expect(JSON.parse(jsonAdd(pkg, "$.keywords[2]", "c").text).keywords).toEqual(["a", "b", "c"]);
    expect(() => jsonAdd(pkg, "$.keywords[5]", "c")).toThrow(/index 5 is past the end/);
  });

  it("refuses an existing non-array value, pointing at set", () => {
    expect(() => jsonAdd(pkg, "$.name", "x")).toThrow(/selects a string .* Use set to replace/);
    expect(() => jsonAdd(pkg, "$.scripts", "x")).toThrow(/selects an object/);
  });

  it("creates one level only", () => {
    expect(() => jsonAdd(pkg, "$.a.b.c", 1)).toThrow(/neither does its parent/);
  });

  it("refuses a missing path that does not end in a plain key", () => {
    expect(() => jsonAdd(pkg, "$.items[?(@.id == 9)]", 1)).toThrow(/can only create a key named plainly/);
    expect(() => jsonAdd(pkg, "$.nothing[*]", 1)).toThrow(/can only create a key/);
  });

  it("adds a __proto__ key as data, not as a prototype", () => {
    const text = jsonAdd("{}", "$['__proto__']", { polluted: true }).text;
    expect(text).toBe('{"__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("jsonRemove", () => {
  it("removes object keys", () => {
    expect(JSON.parse(jsonRemove(pkg, "$.scripts.test").text).scripts).toEqual({});
  });

  it("removes several array items without shifting the wrong ones", () => {
    const result = jsonRemove(pkg, "$.items[?(@.price < 10)]");
    expect(JSON.parse(result.text).items).toEqual([{ id: 2, price: 50 }]);
    expect(JSON.parse(jsonRemove("[0,1,2,3,4,5]", "$[0,2,4]").text)).toEqual([1, 3, 5]);
  });

  it("removes nested matches along with their ancestors", () => {
    expect(JSON.parse(jsonRemove('{"a": [{"a": 1}, 2], "b": 3}', "$..a").text)).toEqual({ b: 3 });
  });

  it("refuses to remove the root", () => {
    expect(() => jsonRemove(pkg, "$")).toThrow(/the document root, which cannot be removed/);
  });

  it("says when nothing matches", () => {
    expect(() => jsonRemove(pkg, "$.items[9]")).toThrow(/matches nothing/);
  });
});

describe("files that cannot be edited safely", () => {
  it.each([
    ['{\n  "a": 1\n  "b": 2\n}', 3, 3, /expected ','/],
    ["{'a': 1}", 1, 2, /unexpected character \(strings and keys take double quotes\)/],
    ['{"a": tru}', 1, 7, /unexpected character/],
    ["{} []", 1, 4, /unexpected text after the end of the JSON value/],
    ['{"a" 1}', 1, 6, /expected ':'/],
    ['{"a": 1', 1, 8, /expected '}'/],
    ['["tab\there"]', 1, 2, /control character in a string/],
    ["", 1, 1, /there is no JSON value/],
  ])("reports invalid JSON %j with line %i and column %i", (text, line, column, detail) => {
    const attempt = () => jsonSet(text, "$.a", 2);
    expect(attempt).toThrow(InvalidJsonError);
    expect(attempt).toThrow(new RegExp(`line ${line} column ${column}: `));
    expect(attempt).toThrow(detail);
  });

  it("refuses a document nested deeper than the limit before parsing it", () => {
    const deep = "[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1);
    expect(() => jsonView(deep, "$")).toThrow(
      new RegExp(`line 1 column ${MAX_JSON_DEPTH + 1}: it nests deeper than ${MAX_JSON_DEPTH} levels`),
    );
    const ok = "[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH);
    expect(jsonSet(ok, "$", 1).text).toBe("1");
  });

  it("views but will not edit a file with duplicate keys", () => {
    const text = '{\n  "a": 1,\n  "a": 2\n}\n';
    expect(jsonView(text, "$.a").text).toBe("2");
    expect(() => jsonSet(text, "$.a", 3)).toThrow(
      /key "a" twice in one object \(line 2 column 3 and line 3 column 3\)/,
    );
  });

  it("keeps numbers a double cannot hold exactly, since it never rewrites them", () => {
    const text = '{"id": 12345678901234567890, "n": 1.50}';
    expect(jsonSet(text, "$.n", 2).text).toBe('{"id": 12345678901234567890, "n": 2}');
  });
});

describe("JSONPath safety", () => {
  it("does not run script injected through a filter", () => {
    const attempt = () => jsonView(pkg, "$..[?(@.constructor.constructor('return process')())]");
    expect(attempt).toThrow(InvalidArgumentError);
    expect(attempt).toThrow(/^json_path: could not be evaluated: .*calls are not allowed/);
  });

  it.each([
    "$..[?(process.exit(1))]",
    "$.items[?(this.x)]",
    "$[(require('fs'))]",
    "$.items[?(@.id.toString() == '1')]",
    "$.items[?(@.name.match(/(a+)+$/))]",
  ])("refuses %s", (path) => {
    expect(() => jsonView(pkg, path)).toThrow(/^json_path: could not be evaluated/);
  });

  it("leaves Object.prototype alone whatever the path", () => {
    for (const path of [
      "$.__proto__.polluted",
      "$['__proto__']['polluted']",
      "$.constructor.prototype.polluted",
    ]) {
      try {
        jsonAdd('{"a": {}}', path, true);
      } catch {
        // refused is fine; polluting is not
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses malformed paths instead of guessing", () => {
    expect(() => jsonView(pkg, "$[[[")).toThrow(/^json_path: has empty brackets|^json_path: has an unclosed/);
    expect(() => jsonView(pkg, "name")).toThrow(/^json_path: must start with \$/);
    expect(() => jsonView(pkg, "$.a[b")).toThrow(/unclosed '\['/);
    expect(() => jsonView(pkg, "$.a]")).toThrow(/unmatched '\]'/);
    expect(() => jsonView(pkg, "")).toThrow(/^json_path: is empty/);
  });

  it("handles the deepest document it accepts", () => {
    const depth = 500;
    const text = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    expect(jsonView(text, "$..[?(@ === 1)]").matches).toEqual([
      { path: `$${"['a']".repeat(depth)}`, value: 1 },
    ]);
    expect(() => jsonView(text, "$..a")).toThrow(LimitExceededError);
    expect(JSON.parse(jsonSet(text, "$..a", 0).text)).toEqual({ a: 0 });
  });
});

describe("edits in place", () => {
  const tsconfig = `{
  // Compiler settings
  "compilerOptions": {
    "target": "es2022", /* modern */
    "strict": true, // keep
    "paths": { "@/*": ["src/*"] },
  },
  "include": ["src"], // sources
}
`;

  it("keeps JSONC comments and trailing commas, and changes only what was edited", () => {
    expect(jsonSet(tsconfig, "$.compilerOptions.target", "es2023").text).toBe(
      tsconfig.replace('"es2022"', '"es2023"'),
    );
    expect(jsonAdd(tsconfig, "$.include", "test").text).toBe(tsconfig.replace('["src"]', '["src", "test"]'));
    expect(jsonAdd(tsconfig, "$.compilerOptions.paths['#/*']", ["lib/*"]).text).toBe(
      tsconfig.replace('{ "@/*": ["src/*"] }', '{ "@/*": ["src/*"], "#/*": ["lib/*"] }'),
    );
    expect(jsonRemove(tsconfig, "$.compilerOptions.strict").text).toBe(
      tsconfig.replace('    "strict": true, // keep\n', ""),
    );
  });

  it("adds keys on their own line in the file's indentation, after a comment that ends the line", () => {
    const text = '{\n\t"a": 1, // one\n\t"b": {\n\t\t"c": 2 // two\n\t}\n}\n';
    expect(jsonAdd(text, "$.b.d", { e: [1] }).text).toBe(
      '{\n\t"a": 1, // one\n\t"b": {\n\t\t"c": 2, // two\n\t\t"d": {\n\t\t\t"e": [\n\t\t\t\t1\n\t\t\t]\n\t\t}\n\t}\n}\n',
    );
    expect(jsonAdd('{\r\n  "a": {}\r\n}\r\n', "$.a.b", 1).text).toBe(
      '{\r\n  "a": {\r\n    "b": 1\r\n  }\r\n}\r\n',
    );
    expect(jsonAdd('{"a":[]}', "$.a", { b: 1 }).text).toBe('{"a":[{"b":1}]}');
  });

  it("removes a last entry without taking the comment of the one before", () => {
    const text = '{\n  "a": 1, // about a\n  "b": 2\n}\n';
    expect(jsonRemove(text, "$.b").text).toBe('{\n  "a": 1 // about a\n}\n');
    expect(jsonRemove(text, "$.a").text).toBe('{\n  "b": 2\n}\n');
    expect(jsonRemove('{"a": [1, 2, 3]}', "$.a[2]").text).toBe('{"a": [1, 2]}');
    expect(jsonRemove('{"a": [1]}', "$.a[0]").text).toBe('{"a": []}');
  });

  it("writes a replaced container in the layout around it", () => {
    const text = '{\n  "a": 1,\n  "b": [1, 2]\n}\n';
    expect(jsonSet(text, "$.a", { x: [1, 2] }).text).toBe(
      '{\n  "a": {\n    "x": [\n      1,\n      2\n    ]\n  },\n  "b": [1, 2]\n}\n',
    );
    expect(jsonSet(text, "$.b[0]", { x: 1 }).text).toBe('{\n  "a": 1,\n  "b": [{"x": 1}, 2]\n}\n');
  });
});
