/**
 * The HTTP bearer token is compared in constant time: whatever the caller sends, the comparison is
 * one timingSafeEqual over two digests of equal length, so neither how much of the token matched
 * nor its length shows in the time an answer takes. Checked by behaviour: every near miss is
 * refused, and every comparison goes through timingSafeEqual with equal-length inputs.
 */
import * as crypto from "node:crypto";
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return {
    ...actual,
    timingSafeEqual: vi.fn((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) =>
      actual.timingSafeEqual(a, b),
    ),
  };
});

const { tokenMatches } = await import("../../src/server/http-guard.js");

const TOKEN = "Zq3v-9s1_kP0xYbR7tLmN2cWdE5fGhJ8";

describe("bearer token comparison", () => {
  const compare = vi.mocked(crypto.timingSafeEqual);
  beforeEach(() => {
    compare.mockClear();
  });

  it("accepts the token and refuses every near miss", () => {
    expect(tokenMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(tokenMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
    const misses = [
      undefined,
      "",
      TOKEN,
      `Basic ${TOKEN}`,
      "Bearer",
      "Bearer ",
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}${TOKEN.endsWith("8") ? "9" : "8"}`,
      `Bearer x${TOKEN.slice(1)}`,
      `Bearer ${TOKEN.toUpperCase()}`,
      `Bearer ${TOKEN} ${TOKEN}`,
      `Bearer ${TOKEN}\u0000`,
      `Bearer ${"a".repeat(100_000)}`,
    ];
    for (const header of misses) expect(tokenMatches(header, TOKEN), String(header).slice(0, 60)).toBe(false);
  });

  it("compares with timingSafeEqual over equal-length digests, whatever length was sent", () => {
    for (const sent of ["x", TOKEN.slice(0, 5), TOKEN.slice(0, -1), TOKEN, `${TOKEN}${"y".repeat(500)}`]) {
      compare.mockClear();
      tokenMatches(`Bearer ${sent}`, TOKEN);
      expect(compare, sent).toHaveBeenCalledTimes(1);
      const [given, expected] = compare.mock.calls[0]!;
      expect(given.byteLength).toBe(32);
      expect(expected.byteLength).toBe(32);
      // Digests, not the token: the token's bytes are never what is compared.
      expect(Buffer.from(expected as Uint8Array).toString("utf8")).not.toContain(TOKEN.slice(0, 8));
    }
  });
});
