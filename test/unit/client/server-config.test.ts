import { describe, expect, it } from "vitest";
import { checkDurationMs, checkServerConfig } from "../../../src/client/server-config.js";

describe("checkServerConfig", () => {
  it("accepts a stdio and an http configuration", () => {
    expect(
      checkServerConfig({ transport: "stdio", command: "drydock", args: ["serve"], env: { A: "1" } }),
    ).toBeUndefined();
    expect(
      checkServerConfig({ transport: "http", url: "http://127.0.0.1:1/mcp", token: "t" }),
    ).toBeUndefined();
  });

  it.each([
    [undefined, "server: missing"],
    ["drydock", "server: expected an object"],
    [{ transport: "ftp" }, 'server.transport: expected "stdio" or "http", got "ftp"'],
    [{ transport: "stdio" }, "server.command: missing"],
    [{ transport: "stdio", command: "  " }, "server.command: missing"],
    [{ transport: "stdio", command: "x", args: "serve" }, "server.args: expected an array of strings"],
    [{ transport: "stdio", command: "x", env: { A: 1 } }, "server.env: expected an object of string values"],
    [{ transport: "stdio", command: "x", stderr: "pipe" }, 'server.stderr: expected "inherit" or "ignore"'],
    [{ transport: "http" }, "server.url: missing"],
    [{ transport: "http", url: "not a url" }, "is not a URL"],
    [{ transport: "http", url: "ftp://host/mcp" }, "protocol ftp: is not supported"],
    [{ transport: "http", url: "http://h/mcp", token: 5 }, "server.token: expected a non-empty string"],
  ])("rejects %j naming the field", (config, message) => {
    expect(checkServerConfig(config)).toContain(message);
  });
});

describe("checkDurationMs", () => {
  it("accepts absent or positive values and names the field otherwise", () => {
    expect(checkDurationMs("timeoutMs", undefined)).toBeUndefined();
    expect(checkDurationMs("timeoutMs", 1_000)).toBeUndefined();
    expect(checkDurationMs("timeoutMs", 0)).toContain("timeoutMs: expected a positive number");
    expect(checkDurationMs("timeoutMs", Number.NaN)).toContain("timeoutMs");
    expect(checkDurationMs("timeoutMs", "5")).toContain("timeoutMs");
  });
});
