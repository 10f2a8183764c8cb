import { JSONPath } from "jsonpath-plus";
import { describe, expect, it } from "vitest";
import {
  checkJsonPath,
  jsonPathSegments,
  locate,
  queryJson,
} from "../../../src/tools/edit/json-path-query.js";

const doc = { a: { "x/y~z": 1, "it's": 2 }, list: [10, 20, { deep: true }] };

describe("queryJson", () => {
  it("returns normalised paths and JSON Pointers", () => {
    expect(queryJson(doc, "$.a.*")).toEqual([
      { path: "$['a']['x/y~z']", pointer: "/a/x~1y~0z", value: 1 },
      { path: "$['a']['it's']", pointer: "/a/it's", value: 2 },
    ]);
  });

  it("accepts segment arrays, recursive descent included", () => {
    expect(queryJson(doc, ["$", "..", "deep"]).map((m) => m.pointer)).toEqual(["/list/2/deep"]);
    expect(jsonPathSegments("$..list[0]")).toEqual(["$", "..", "list", "0"]);
  });

  it("does not grow jsonpath-plus's global cache", () => {
    const cache = JSONPath.cache as Record<string, unknown>;
    const before = Object.keys(cache).length;
    for (let i = 0; i < 50; i++) queryJson(doc, `$.list[?(@ > ${i})]`);
    expect(Object.keys(cache).length).toBe(before);
  });
});

describe("locate", () => {
  it("follows pointers through own properties, unescaping ~0 and ~1", () => {
    expect(locate(doc, "/a/x~1y~0z")).toEqual({ parent: doc.a, key: "x/y~z", value: 1 });
    expect(locate(doc, "/list/2/deep")).toMatchObject({ key: "deep", value: true });
    expect(locate(doc, "")).toEqual({ parent: null, key: null, value: doc });
  });

  it("leads nowhere for missing, inherited or malformed steps", () => {
    expect(locate(doc, "/nope")).toBeUndefined();
    expect(locate(doc, "/a/constructor")).toBeUndefined();
    expect(locate(doc, "/list/01")).toBeUndefined();
    expect(locate(doc, "/list/3")).toBeUndefined();
  });
});

describe("checkJsonPath", () => {
  it.each(["$", "$.a", "$['a b'].c[0]", "$..x[?(@.y == ']')]", "$.a[(@.length-1)]"])("accepts %s", (path) => {
    expect(() => checkJsonPath(path)).not.toThrow();
  });

  it("refuses paths longer than the limit", () => {
    expect(() => checkJsonPath(`$${".a".repeat(600)}`)).toThrow(/longer than 1000/);
  });

  it("refuses a filter written without parentheses", () => {
    expect(() => checkJsonPath("$.items[?@.price < 10]")).toThrow(/write it as \[\?\(@\.price < 10\)\]/);
  });

  it("refuses an unclosed quote", () => {
    expect(() => checkJsonPath("$['a")).toThrow(/unclosed ' quote/);
  });
});
