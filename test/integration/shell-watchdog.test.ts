/**
 * Every bash call answers by its time limit plus a small grace, whatever the shell does: here the
 * engine stops passing anything (the shell's exec stream, the stop script, a new shell), which
 * the shell's own stop path cannot see past. The answer says the shell stopped answering, and
 * once the engine answers again the next command runs in a new shell.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, inject, it } from "vitest";
import { LABEL_STATE } from "../../src/engine/labels.js";
import { DEFAULT_WATCHDOG_GRACE_MS } from "../../src/session/shell-watchdog.js";
import { FreezableEngine } from "../helpers/frozen-engine.js";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo } from "../helpers/repos.js";
import { testEngine } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

describe("the shell watchdog", () => {
  it("answers a call whose shell went silent by its limit plus the grace, and the next call works", async () => {
    using repo = tempRepo({ "README.md": "hello\n" });
    await using engine = await FreezableEngine.start();
    const state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const client = new Client({ name: "watchdog", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage"), "--no-env"],
        env: {
          ...(process.env as Record<string, string>),
          DRYDOCK_STATE_DIR: state,
          DOCKER_HOST: engine.host,
        },
        stderr: "ignore",
      }),
    );
    try {
      const bash = async (command: string, timeout_s?: number) =>
        ok(
          await client.callTool({ name: "bash", arguments: { command, timeout_s } }, undefined, {
            timeout: 170_000,
          }),
        );
      expect((await bash("cd /tmp && export KEPT=1 && echo ready")).stdout).toBe("ready\n");

      engine.freeze();
      const limitS = 2;
      const started = Date.now();
      const silent = await bash("echo never-seen", limitS);
      const tookMs = Date.now() - started;
      // The limit, the shell's own SIGINT grace (1 s), the watchdog's grace, and room for a loaded machine.
      expect(tookMs).toBeLessThan(limitS * 1000 + 1000 + DEFAULT_WATCHDOG_GRACE_MS + 3000);
      expect(tookMs).toBeGreaterThanOrEqual(limitS * 1000);
      expect(silent).toMatchObject({ exit_code: null, timed_out: true, restarted: true });
      expect(silent.note).toMatch(/the shell stopped answering/);

      engine.thaw();
      const after = await bash("pwd; echo ${KEPT:-unset}");
      expect(after).toMatchObject({ exit_code: 0, restarted: true });
      expect(after.stdout).toBe("/workspace\nunset\n");
      expect(after.note).toMatch(/stopped answering; this command ran in a new shell/);
      expect((await bash("cat README.md")).stdout).toBe("hello\n");
    } finally {
      engine.thaw();
      await client.close();
      const real = await testEngine();
      for (const box of await real.listBoxes(LABEL_STATE, state)) await real.remove(box.id);
      rmSync(state, { recursive: true, force: true });
    }
  });
});
