/**
 * The `command` agent: any program on the host that speaks MCP. It gets the task's prompt on
 * stdin and in DRYDOCK_TASK_PROMPT, and the MCP endpoint of the task's one session in
 * DRYDOCK_MCP_URL / DRYDOCK_MCP_TOKEN / DRYDOCK_SESSION_ID, and which attempt at the task it is in
 * DRYDOCK_ATTEMPT (1…K). Its output is the agent log; a
 * non-zero exit is an agent error. At the deadline (or Ctrl-C) its whole process group gets
 * SIGTERM, then SIGKILL.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { remainingMs, type AgentContext, type AgentOutcome, type EvalAgent } from "./eval-agent.js";
import type { EvalTask } from "./eval-task.js";
import type { TaskMcpEndpoint } from "./task-mcp-endpoint.js";

const KILL_GRACE_MS = 5_000;

export class CommandAgent implements EvalAgent {
  readonly name = "command";

  constructor(
    private readonly command: string,
    private readonly endpoint: TaskMcpEndpoint,
  ) {}

  check(_task: EvalTask): string | undefined {
    return undefined;
  }

  async run(ctx: AgentContext): Promise<AgentOutcome> {
    const grant = this.endpoint.grant(ctx.session);
    const cwd = await mkdtemp(join(tmpdir(), "drydock-eval-agent-"));
    try {
      ctx.log(`$ ${this.command}\n`);
      const { exitCode, signal, timedOut } = await this.spawn(ctx, cwd, {
        DRYDOCK_MCP_URL: grant.url,
        DRYDOCK_MCP_TOKEN: grant.token,
        DRYDOCK_SESSION_ID: grant.sessionId,
        DRYDOCK_TASK_ID: ctx.task.id,
        DRYDOCK_ATTEMPT: String(ctx.attempt),
        DRYDOCK_TASK_PROMPT: ctx.task.prompt,
        DRYDOCK_EDITABLE_FILES: (ctx.task.editable_files ?? []).join("\n"),
      });
      ctx.log(
        `\n[drydock] the command ${timedOut ? "was stopped at the time limit" : exitCode !== null ? `exited ${exitCode}` : `was killed by ${signal}`}\n`,
      );
      if (timedOut) return { timedOut: true, message: "stopped at the task's time limit" };
      if (exitCode === 0) return { exitCode, message: "the command exited 0" };
      return {
        ...(exitCode !== null ? { exitCode } : {}),
        error:
          exitCode !== null
            ? `the agent command exited ${exitCode}`
            : `the agent command was killed by ${signal}`,
      };
    } finally {
      await grant.revoke();
      await rm(cwd, { recursive: true, force: true });
    }
  }

  private spawn(
    ctx: AgentContext,
    cwd: string,
    env: Record<string, string>,
  ): Promise<{ exitCode: number | null; signal: NodeJS.Signals | null; timedOut: boolean }> {
    return new Promise((resolve, reject) => {
      const child = spawn("sh", ["-c", this.command], {
        cwd,
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group, so the whole tree it starts can be stopped.
        detached: true,
      });
      let timedOut = false;
      let killTimer: NodeJS.Timeout | undefined;
      const stop = () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const group = (sig: NodeJS.Signals) => {
          try {
            process.kill(-child.pid!, sig);
          } catch {
            // Already gone.
          }
        };
        group("SIGTERM");
        killTimer = setTimeout(() => group("SIGKILL"), KILL_GRACE_MS);
      };
      const deadline = setTimeout(() => {
        timedOut = true;
        stop();
      }, remainingMs(ctx.deadline));
      const onAbort = () => stop();
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      child.stdout.on("data", (d: Buffer) => ctx.log(d.toString("utf8")));
      child.stderr.on("data", (d: Buffer) => ctx.log(d.toString("utf8")));
      child.stdin.on("error", () => undefined);
      child.stdin.end(ctx.task.prompt + "\n");
      child.on("error", (error) => {
        clearTimeout(deadline);
        ctx.signal.removeEventListener("abort", onAbort);
        reject(error);
      });
      child.on("close", (exitCode, signal) => {
        clearTimeout(deadline);
        clearTimeout(killTimer);
        ctx.signal.removeEventListener("abort", onAbort);
        resolve({ exitCode, signal, timedOut });
      });
    });
  }
}
