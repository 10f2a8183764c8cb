import { describe, expect, it } from "vitest";
import {
  cpus,
  decimal,
  MAX_SECONDS,
  memoryMB,
  port,
  seconds,
  wholeNumber,
} from "../../../src/cli/flag-values.js";
import { FlagError } from "../../../src/util/errors.js";

const refusal = (check: () => unknown): string => {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(FlagError);
    return (error as Error).message;
  }
  throw new Error("accepted");
};

describe("flag values", () => {
  it("takes whole numbers in range and leaves an absent flag undefined", () => {
    expect(wholeNumber("3", "--n", { min: 1 })).toBe(3);
    expect(wholeNumber(undefined, "--n", { min: 1 })).toBeUndefined();
    for (const bad of ["0", "1.5", "-1", "", "3x", "1e3", "99999999999999999999"]) {
      expect(refusal(() => wholeNumber(bad, "--n", { min: 1 }))).toMatch(
        /^--n: .* is not a whole number of 1 or more; write e\.g\. --n 1$/,
      );
    }
  });

  it("names the maximum and why", () => {
    expect(
      refusal(() => wholeNumber("9", "--pool", { min: 0, max: 4, maxReason: "4 boxes fill the host" })),
    ).toBe('--pool: "9" is not a whole number from 0 to 4 (4 boxes fill the host); write e.g. --pool 1');
  });

  it("takes decimals in range", () => {
    expect(decimal("0.5", "--usd", { min: 0 })).toBe(0.5);
    for (const bad of ["-0.1", "NaN", "Infinity", " ", "abc"]) {
      expect(refusal(() => decimal(bad, "--usd", { min: 0 }))).toMatch(/^--usd: /);
    }
  });

  it("takes ports from 0 to 65535", () => {
    expect(port("0", "--port")).toBe(0);
    expect(port("65535", "--port")).toBe(65_535);
    expect(refusal(() => port("99999", "--port"))).toBe(
      '--port: "99999" is not a whole number from 0 to 65535 (0 picks any free port); write e.g. --port 8765',
    );
  });

  it("takes seconds above 0 that a timer can hold", () => {
    expect(seconds("1.5", "--timeout")).toBe(1.5);
    expect(seconds(String(MAX_SECONDS), "--timeout")).toBe(MAX_SECONDS);
    for (const bad of ["0", "-5", String(MAX_SECONDS + 1), "soon"]) {
      expect(refusal(() => seconds(bad, "--timeout"))).toMatch(
        /^--timeout: .* is not a number of seconds above 0/,
      );
    }
  });

  it("bounds memory and CPUs by the engine's host", () => {
    expect(memoryMB("512", "--memory-mb", 4096)).toBe(512);
    expect(refusal(() => memoryMB("1", "--memory-mb", 4096))).toBe(
      `--memory-mb: "1" is not a whole number from 128 to 4096 (the engine's host has 4096 MiB); write e.g. --memory-mb 2048`,
    );
    expect(refusal(() => memoryMB("8192", "--memory-mb", 4096))).toMatch(/from 128 to 4096/);
    expect(cpus("0.5", "--cpus", 2)).toBe(0.5);
    expect(refusal(() => cpus("3", "--cpus", 2))).toBe(
      `--cpus: "3" is not a number from 0.01 to 2 (the engine's host has 2 CPUs); write e.g. --cpus 1`,
    );
    expect(refusal(() => cpus("0", "--cpus", 2))).toMatch(/^--cpus: "0"/);
  });
});
