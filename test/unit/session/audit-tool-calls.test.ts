import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { RUNNING_LINE_AFTER_MS } from "../../../src/server/tool-audit.js";
import { MAX_OUTPUT_TAIL_BYTES } from "../../../src/session/audit-entry.js";
import { auditLogPath, readAuditLog } from "../../../src/session/audit-log.js";
import { addLogRedactor } from "../../../src/util/log.js";
import type { Session } from "../../../src/session/session.js";
import type { SessionAccess } from "../../../src/tools/session-access.js";
import { defineTool, type ToolServices } from "../../../src/tools/tool.js";
import { SessionNotFoundError } from "../../../src/util/errors.js";
import { errorText, toolClient } from "../server/registered-tools.js";

const MINE = "aaaaaaaaaaaa";
const THEIRS = "bbbbbbbbbbbb";

/** Sessions as the server scopes them: client "c" owns MINE only. */
const sessions: SessionAccess = {
  resolve: async (clientId, sessionId) => {
    const id = sessionId ?? MINE;
    if (clientId !== "c" || id !== MINE) throw new SessionNotFoundError(id);
    return { id } as Session;
  },
  create: async () => ({ id: MINE }) as Session,
  resume: async (clientId, sessionId) => sessions.resolve(clientId, sessionId),
  list: () => [{ id: MINE } as Session],
  fork: async () => [],
  destroy: async () => undefined,
};

const probe = defineTool({
  name: "probe",
  title: "probe",
  description: "runs a pretend command in a session",
  inputSchema: {
    command: z.string(),
    session_id: z.string().optional(),
    fail: z.boolean().optional(),
    wait_ms: z.number().optional(),
  },
  outputSchema: { exit_code: z.number(), stdout: z.string(), stderr: z.string() },
  async run(args, ctx) {
    await ctx.services.sessions.resolve(ctx.clientId, args.session_id);
    if (args.wait_ms) await new Promise((r) => setTimeout(r, args.wait_ms));
    if (args.fail) throw new Error("the box said no");
    return { exit_code: 3, stdout: "four", stderr: "ab" };
  },
});

describe("the tool wrapper's audit lines", () => {
  let state: string;
  const before = process.env.DRYDOCK_STATE_DIR;
  beforeEach(() => {
    state = mkdtempSync(join(tmpdir(), "drydock-audit-"));
    process.env.DRYDOCK_STATE_DIR = state;
  });
  afterEach(() => {
    if (before === undefined) delete process.env.DRYDOCK_STATE_DIR;
    else process.env.DRYDOCK_STATE_DIR = before;
    rmSync(state, { recursive: true, force: true });
  });
  const entries = async (id: string) => (await readAuditLog(auditLogPath(id, state)!)).entries;

  it("logs each call in the session it reached: tool, args, exit code, duration, output bytes, client", async () => {
    await using client = await toolClient([probe], { sessions } as Partial<ToolServices>);
    await client.callTool({ name: "probe", arguments: { command: "make test" } });
    const [entry, ...rest] = await entries(MINE);
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({
      session: MINE,
      actor: "agent",
      tool: "probe",
      args: { command: "make test" },
      outcome: { ok: false, exit_code: 3 },
      output_bytes: 6,
      client: "c",
    });
    expect(entry!.duration_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(entry!.ts)).not.toBeNaN();
  });

  it("keeps the tail of what a command printed, with a host key redacted even where the tail cuts it", async () => {
    const key = "sk-host-key-0123456789abcdef0123456789";
    const remove = addLogRedactor((t) => t.split(key).join("[redacted]"));
    try {
      // The key starts 10 bytes before the last 4 KiB: a tail cut first would hold its end.
      const output = "a".repeat(100) + key + "b".repeat(MAX_OUTPUT_TAIL_BYTES - key.length + 10) + "\n";
      const printer = defineTool({
        name: "printer",
        title: "printer",
        description: "prints a long log in a session",
        inputSchema: { command: z.string(), session_id: z.string().optional() },
        outputSchema: { exit_code: z.number(), output: z.string() },
        async run(args, ctx) {
          await ctx.services.sessions.resolve(ctx.clientId, args.session_id);
          return { exit_code: 0, output };
        },
      });
      await using client = await toolClient([printer], { sessions } as Partial<ToolServices>);
      await client.callTool({ name: "printer", arguments: { command: "cat log" } });
      const tail = (await entries(MINE))[0]!.outcome.output_tail as string;
      expect(tail.endsWith("b\n")).toBe(true);
      expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(MAX_OUTPUT_TAIL_BYTES);
      expect(tail).not.toContain(key.slice(-8));
    } finally {
      remove();
    }
  });

  it("logs a failed call with its error", async () => {
    await using client = await toolClient([probe], { sessions } as Partial<ToolServices>);
    errorText(await client.callTool({ name: "probe", arguments: { command: "x", fail: true } }));
    expect((await entries(MINE))[0]?.outcome).toEqual({ ok: false, error: "Error: the box said no" });
  });

  it("writes nothing into another client's session when a caller names it", async () => {
    await using client = await toolClient([probe], { sessions } as Partial<ToolServices>);
    errorText(await client.callTool({ name: "probe", arguments: { command: "x", session_id: THEIRS } }));
    expect(await entries(THEIRS)).toEqual([]);
    expect(await entries(MINE)).toEqual([]);
  });

  it("says a call is running once it has run a while, then logs how it ended", async () => {
    await using client = await toolClient([probe], { sessions } as Partial<ToolServices>);
    await client.callTool({
      name: "probe",
      arguments: { command: "sleep", wait_ms: RUNNING_LINE_AFTER_MS + 500 },
    });
    const [running, done] = await entries(MINE);
    expect(running).toMatchObject({
      tool: "probe",
      outcome: { ok: false, running: true },
      duration_ms: null,
    });
    expect(done).toMatchObject({ tool: "probe", outcome: { ok: false, exit_code: 3 } });
    expect(done!.ts).toBe(running!.ts);
  });
});
