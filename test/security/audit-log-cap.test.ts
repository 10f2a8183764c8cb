/**
 * What the host keeps of a session is bounded: an agent that makes call after call with long
 * commands fills its audit log to the cap (DRYDOCK_AUDIT_LOG_MAX_MIB) and no further; the log then
 * holds one marker line that `drydock sessions log` shows, and the session's end says how many
 * entries were left out.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
/** 0.02 MiB: a handful of calls with 3,000-character commands fill it. */
const CAP_BYTES = Math.floor(0.02 * 1024 * 1024);
const CALLS = 20;

describe("a session's audit log at its cap", () => {
  let repo: TempRepo;
  let state: string;
  let client: Client;
  let id: string;
  const env = () =>
    ({ ...process.env, DRYDOCK_STATE_DIR: state, DRYDOCK_AUDIT_LOG_MAX_MIB: "0.02" }) as Record<
      string,
      string
    >;
  const drydock = async (...args: string[]) =>
    (await promisify(execFile)(process.execPath, [cli, ...args], { env: env() })).stdout;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    client = new Client({ name: "audit-cap", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage"), "--pool", "0"],
        env: env(),
        stderr: "ignore",
      }),
    );
    id = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
    for (let i = 0; i < CALLS; i++) {
      ok(
        await client.callTool({
          name: "bash",
          arguments: { session_id: id, command: `echo call-${i} > /dev/null # ${"x".repeat(3000)}` },
        }),
      );
    }
    ok(await client.callTool({ name: "session_destroy", arguments: { session_id: id } }));
  });

  afterAll(async () => {
    await client?.close();
    repo?.[Symbol.dispose]();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  it("stops at the cap with one marker, and the session's end counts what was left out", async () => {
    const size = statSync(join(state, "audit", `${id}.jsonl`)).size;
    // The cap, plus the entry that reached it, the marker and the end: never a log per call.
    expect(size).toBeGreaterThanOrEqual(CAP_BYTES);
    expect(size).toBeLessThan(CAP_BYTES + 8_000);
    const lines = (await drydock("sessions", "log", id, "--json"))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { tool: string; args: Record<string, unknown> });
    const tools = lines.map((l) => l.tool);
    expect(tools.filter((t) => t === "audit_log_full")).toHaveLength(1);
    expect(tools.slice(tools.indexOf("audit_log_full"))).toEqual(["audit_log_full", "session_end"]);
    const logged = tools.filter((t) => t === "bash").length;
    expect(logged).toBeLessThan(CALLS);
    // Every call after the cap is counted (the destroy's own line comes after the session's end).
    expect(lines.at(-1)!.args.entries_not_logged).toBe(CALLS - logged);
  });

  it("`drydock sessions log` shows the marker", async () => {
    const text = await drydock("sessions", "log", id);
    expect(text).toMatch(/drydock +audit_log_full .*audit log cap of 0\.02 MiB reached/);
    expect(text).not.toContain(`call-${CALLS - 1}`);
  });
});
