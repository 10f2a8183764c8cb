import { describe, expect, it } from "vitest";
import { DEFAULT_REAP_INTERVAL_MS, reapIntervalFromEnv } from "../../../src/server/drydock-server.js";

describe("reapIntervalFromEnv", () => {
  it("reads DRYDOCK_REAP_INTERVAL_S in seconds, 0 for none, unset for the default", () => {
    expect(reapIntervalFromEnv(undefined)).toBe(DEFAULT_REAP_INTERVAL_MS);
    expect(DEFAULT_REAP_INTERVAL_MS).toBe(60_000);
    expect(reapIntervalFromEnv("")).toBe(DEFAULT_REAP_INTERVAL_MS);
    expect(reapIntervalFromEnv("2.5")).toBe(2500);
    expect(reapIntervalFromEnv("0")).toBe(0);
  });

  it("refuses a value that is not a number of seconds, naming the variable", () => {
    expect(() => reapIntervalFromEnv("soon")).toThrow(/DRYDOCK_REAP_INTERVAL_S.*number of seconds/);
    expect(() => reapIntervalFromEnv("-1")).toThrow(/DRYDOCK_REAP_INTERVAL_S/);
  });
});
