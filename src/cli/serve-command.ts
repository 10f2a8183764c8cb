import type { Command } from "commander";
import { DrydockServer } from "../server/drydock-server.js";
import { serveHttp } from "../server/http.js";
import { serveStdio } from "../server/stdio.js";
import { serverExtensions } from "../server/extensions.js";

interface ServeOptions {
  repo: string;
  allowRepo: string[];
  maxSessions?: string;
  image?: string;
  http?: boolean;
  host: string;
  port: string;
  keepSessions?: boolean;
  network?: string;
  memoryMb?: string;
  cpus?: string;
  timeout?: string;
  envFile?: string;
  model?: string;
  llm?: string;
  maxLlmRequests?: string;
  maxLlmCostUsd?: string;
  pool: string;
  poolTtl: string;
}

function nonNegative(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${flag}: ${value} is not a number of 0 or more`);
  return n;
}

function positive(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${flag}: ${value} is not a positive number`);
  return n;
}

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("serve the MCP tools over stdio (default) or Streamable HTTP")
    .option("--repo <path>", "git repository that default sessions copy in", process.cwd())
    .option(
      "--allow-repo <path>",
      "another git repository clients may name in session_create (repeatable)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option("--image <image>", "sandbox image (default: the one `drydock image build` made)")
    .option("--http", "serve Streamable HTTP instead of stdio")
    .option("--host <host>", "HTTP bind address (loopback unless you say otherwise)", "127.0.0.1")
    .option("--port <n>", "HTTP port (0: any free port)", "8765")
    .option("--keep-sessions", "leave boxes running at shutdown, for inspection")
    .option("--network <name>", "relaxation: Docker network for every box (default: none)")
    .option("--memory-mb <n>", "memory limit per box in MiB (default 2048)")
    .option("--cpus <n>", "CPU limit per box (default 1)")
    .option("--timeout <seconds>", "default per-command time limit (default 120)")
    .option("--env-file <path>", ".env file with provider keys (kept on the host)")
    .option(
      "--model <model>",
      "default aider model (else DRYDOCK_MODEL, else the offline model when no key is set)",
    )
    .option("--llm <mode>", "live | offline | record:FILE | replay:FILE")
    .option(
      "--max-sessions <n>",
      "sessions clients may hold at once (default: as many as fit in the host's memory at --memory-mb)",
    )
    .option("--max-llm-requests <n>", "per-session limit on model requests")
    .option("--max-llm-cost-usd <n>", "per-session limit on model cost in USD")
    .option(
      "--pool <n>",
      "warm boxes kept ready for new sessions (0: none; default DRYDOCK_POOL, else 2)",
      process.env.DRYDOCK_POOL ?? "2",
    )
    .option("--pool-ttl <seconds>", "replace a warm box idle this long", "900")
    .action(async (opts: ServeOptions) => {
      const extensions = await serverExtensions({
        model: opts.model,
        llm: opts.llm,
        envFile: opts.envFile,
        maxLlmRequests: nonNegative(opts.maxLlmRequests, "--max-llm-requests"),
        maxLlmCostUsd: nonNegative(opts.maxLlmCostUsd, "--max-llm-cost-usd"),
      });
      const server = await DrydockServer.start({
        repo: opts.repo,
        allowedRepos: opts.allowRepo,
        maxSessions: positive(opts.maxSessions, "--max-sessions"),
        image: opts.image,
        keepSessions: opts.keepSessions,
        envFile: opts.envFile,
        sessionOptions: {
          network: opts.network,
          memoryMB: positive(opts.memoryMb, "--memory-mb"),
          cpus: positive(opts.cpus, "--cpus"),
          commandTimeoutMs: opts.timeout ? positive(opts.timeout, "--timeout")! * 1000 : undefined,
        },
        pool: {
          size: Math.floor(nonNegative(opts.pool, "--pool (or DRYDOCK_POOL)")!),
          ttlMs: positive(opts.poolTtl, "--pool-ttl")! * 1000,
        },
        ...extensions,
      });
      if (!opts.http) {
        await serveStdio(server);
        return;
      }
      const handle = await serveHttp(server, {
        host: opts.host,
        port: Number(opts.port),
        token: process.env.DRYDOCK_TOKEN || undefined,
      });
      process.stderr.write(`[drydock] serving MCP on ${handle.url}\n`);
      process.stderr.write(
        handle.tokenFile
          ? `[drydock] bearer token written to ${handle.tokenFile} (mode 0600)\n`
          : "[drydock] bearer token: the value of DRYDOCK_TOKEN\n",
      );
      const stop = async () => {
        await handle.close();
        await server.shutdown();
        process.exit(0);
      };
      process.once("SIGINT", () => void stop());
      process.once("SIGTERM", () => void stop());
    });
}
