import { describe, expect, it } from "vitest";
import { FilterExpression, SafeFilterScript } from "../../../src/tools/edit/filter-expression.js";

const run = (code: string, v: unknown, extra: Record<string, unknown> = {}) =>
  new FilterExpression(code).evaluate({ _$_v: v, _$_root: { limit: 5 }, ...extra });

describe("FilterExpression", () => {
  it("compares, combines and does arithmetic on data", () => {
    expect(run("_$_v.price < 10 && _$_v.tag == 'sale'", { price: 3, tag: "sale" })).toBe(true);
    expect(run("_$_v.price < 10 && _$_v.tag == 'sale'", { price: 30, tag: "sale" })).toBe(false);
    expect(run("!(_$_v.a === 1) || _$_v.b !== 'x'", { a: 1, b: "x" })).toBe(false);
    expect(run("_$_v.length - 1", [1, 2, 3])).toBe(2);
    expect(run("(_$_v.n + 2) * 3 % 5", { n: 1 })).toBe(4);
    expect(run("-_$_v.n >= -1", { n: 1 })).toBe(true);
    expect(run("_$_v.n <= _$_root.limit", { n: 5 })).toBe(true);
    expect(run("_$_v['a b'][0] == \"x\\u0021\"", { "a b": ["x!"] })).toBe(true);
    expect(run("@.a == null", { a: null })).toBe(true);
  });

  it("reads missing and nested-missing members as undefined instead of throwing", () => {
    expect(run("_$_v.a.b.c == 1", {})).toBe(false);
    expect(run("_$_v.a", null)).toBeUndefined();
  });

  it("reads own data only: no prototype members, no methods", () => {
    expect(run("_$_v.constructor", {})).toBeUndefined();
    expect(run("_$_v.__proto__", {})).toBeUndefined();
    expect(run("_$_v.toString", {})).toBeUndefined();
    expect(run("_$_v.length", "abc")).toBe(3);
    expect(run("_$_v['__proto__']", JSON.parse('{"__proto__": 7}'))).toBe(7);
  });

  it("never lets an object from the data convert itself", () => {
    const hostile = { toString: "x", valueOf: "y" };
    expect(run("_$_v + 1", hostile)).toBeUndefined();
    expect(run("_$_v == 'x'", hostile)).toBe(false);
    expect(run("_$_v < 1", hostile)).toBeUndefined();
  });

  it.each([
    ["_$_v.constructor.constructor('return process')()", /calls are not allowed/],
    ["process.exit(1)", /unknown name "process"/],
    ["this", /unknown name "this"/],
    ["_$_v.name.match(/(a+)+$/)", /calls are not allowed/],
    ["/(a+)+$/", /regular expressions are not allowed/],
    ["x = 1", /unexpected "="/],
    ["_$_v.a; 1", /unexpected ";"/],
    ["`${1}`", /unexpected "`"/],
    ["'unterminated", /unterminated string/],
    ["", /empty/],
    ["(".repeat(100) + "1" + ")".repeat(100), /nests deeper/],
    ["1 + ".repeat(1_000) + "1", /longer than/],
  ])("refuses %j", (code, message) => {
    expect(() => new FilterExpression(code)).toThrow(message);
  });

  it("works as a jsonpath-plus eval class with a short cache key", () => {
    const script = new SafeFilterScript("_$_v > 1");
    expect(script.runInNewContext({ _$_v: 2 })).toBe(true);
    expect(`${SafeFilterScript as unknown as string}`).toBe("drydockFilter");
  });
});
