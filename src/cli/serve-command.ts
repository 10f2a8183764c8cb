import { ENGINE_HELP } from "../engine/connect-engine.js";
import { Option, type Command } from "commander";
import { ALLOW_HOST_HELP, collectAllowHost } from "./allow-host-flag.js";
import { ENV_REGISTRY_HELP, parseEnvRegistry } from "./env-registry-flag.js";
import { ALLOW_BASE_IMAGE_HELP, checkAllowBaseImages, collectBaseImage } from "./base-image-flag.js";
import { PULL_HELP, checkPullFlag } from "./pull-flag.js";
import { DrydockServer } from "../server/drydock-server.js";
import { serveHttp } from "../server/http.js";
import { serveStdio } from "../server/stdio.js";
import { serverExtensions } from "../server/extensions.js";
import { aiderTools } from "../tools/aider/aider-tools.js";
import { allTools } from "../tools/all-tools.js";
import { defaultToolSets, pickTools, toolSetsFlag } from "../tools/tool-sets.js";
import { collectEgress, EGRESS_ALLOW_PRIVATE_HELP, EGRESS_HELP, egressFlags } from "./egress-flags.js";
import { asFlagError } from "./flag-checks.js";
import { KEYS_FILE_HELP } from "./keys-file-flag.js";
import { RUNTIME_HELP } from "./runtime-flag.js";
import { checkServeFlags, type ServeFlags } from "./serve-flags.js";
import { printErr } from "./terminal-out.js";
import {
  INCLUDE_UNTRACKED_DEPENDENCIES_FLAG,
  INCLUDE_UNTRACKED_DEPENDENCIES_HELP,
} from "./untracked-dependencies-flag.js";

interface ServeOptions extends ServeFlags {
  allowBaseImage?: string[];
  allowHost: string[];
  envRegistry?: string;
  pull?: string;
  keepSessions?: boolean;
  includeUntrackedDependencies?: boolean;
  model?: string;
  tools?: string;
  outputSchemas?: boolean;
  env: boolean;
  caCert?: string;
  egress: string[];
  egressAllowPrivate: string[];
}

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("serve the MCP tools over stdio (default) or Streamable HTTP")
    .option("--engine <url>", ENGINE_HELP)
    .option("--repo <path>", "git repository that default sessions copy in", process.cwd())
    .option(
      "--allow-repo <path>",
      "another git repository clients may name in session_create (repeatable)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option(
      "--image <image>",
      "sandbox image, and the base of repositories' environments (default: the one `drydock image build` made)",
    )
    .option(
      "--no-env",
      "ignore repositories' environment definitions: every box uses the sandbox image as it is",
    )
    .option("--env-registry <registry>", ENV_REGISTRY_HELP, parseEnvRegistry)
    .option(
      "--ca-cert <path>",
      "CA bundle environment builds and boxes with --egress trust (default: SSL_CERT_FILE / the system bundle)",
    )
    .option("--allow-base-image <ref>", ALLOW_BASE_IMAGE_HELP, collectBaseImage, [] as string[])
    .option("--pull <when>", PULL_HELP, "missing")
    .option(INCLUDE_UNTRACKED_DEPENDENCIES_FLAG, INCLUDE_UNTRACKED_DEPENDENCIES_HELP)
    .option("--http", "serve Streamable HTTP instead of stdio")
    .option("--host <host>", "HTTP bind address (loopback unless you say otherwise)", "127.0.0.1")
    .option("--port <n>", "HTTP port (0: any free port)", "8765")
    .option("--allow-host <host:port>", ALLOW_HOST_HELP, collectAllowHost, [] as string[])
    .option(
      "--disconnect-grace <seconds>",
      "HTTP: how long after a client's connection closed its sessions are removed (or, with --keep-sessions, released for session_resume) unless it comes back",
      "60",
    )
    .option(
      "--keep-sessions",
      "keep sessions: boxes outlive the server (shutdown or crash) and a restarted server continues them",
    )
    .option("--keep-ttl <seconds>", "how long a kept box outlives a server that died (default 86400: a day)")
    .option("--network <name>", "relaxation: Docker network for every box (default: none)")
    .option("--egress <hosts>", EGRESS_HELP, collectEgress, [] as string[])
    .option("--egress-allow-private <cidr>", EGRESS_ALLOW_PRIVATE_HELP, collectEgress, [] as string[])
    .option("--runtime <name>", RUNTIME_HELP)
    .option("--memory-mb <n>", "memory limit per box in MiB (default 2048)")
    .option("--cpus <n>", "CPU limit per box (default 1)")
    .option("--timeout <seconds>", "default per-command time limit (default 120)")
    .option(
      "--max-output-bytes <n>",
      "the most of each stream one bash call may ask to keep, with max_output_bytes (default 4194304: 4 MiB; a call keeps 30000 unless it asks)",
    )
    .option("--keys-file <path>", KEYS_FILE_HELP)
    .addOption(new Option("--env-file <path>").hideHelp())
    .option(
      "--offline-script <file>",
      "the offline model's script (default: DRYDOCK_OFFLINE_SCRIPT, else the built-in one)",
    )
    .option(
      "--model <model>",
      "default aider model (else DRYDOCK_MODEL, else the offline model when no key is set)",
    )
    .option("--llm <mode>", "live | offline | record:FILE | replay:FILE")
    .option(
      "--max-sessions <n>",
      "sessions clients may hold at once (default: no count; sessions are admitted by the memory their boxes use)",
    )
    .option("--max-checkpoints <n>", "checkpoints each session may hold (default 20)")
    .option(
      "--checkpoint-max-mb <n>",
      "MiB one checkpoint may hold: changed files, git index, refs (default 256)",
    )
    .option(
      "--memory-reserve-mb <n>",
      "memory sessions leave free on the engine's host, for the host and for boxes that grow (default: a quarter of it, at least 1024)",
    )
    .option("--max-llm-requests <n>", "per-session limit on model requests")
    .option("--max-llm-cost-usd <n>", "per-session limit on model cost in USD")
    .option(
      "--pool <n>",
      "warm boxes kept ready for new sessions (0: none; default DRYDOCK_POOL, else 2)",
      process.env.DRYDOCK_POOL ?? "2",
    )
    .option(
      "--pool-max <n>",
      "the most warm boxes the pool grows to when sessions ask for more than --pool within 5 minutes, each only as admission allows (default 8, or --pool when larger; --pool: no growth)",
    )
    .option("--pool-ttl <seconds>", "replace a warm box idle this long", "900")
    .option(
      "--tools <sets>",
      "tool sets clients see, comma-separated: core (default: session_create/destroy/diff/apply, bash, file_editor, code_search, git_diff, task_done; with --keep-sessions also session_resume), minimal, sessions, shell, edit, thinking, aider, tasks, all, or single tool names",
    )
    .option(
      "--output-schemas",
      "list each tool's output schema in tools/list, for clients that check replies against it (default: left out, which halves what the list costs a model's context; replies carry structuredContent either way)",
    )
    .action(async (opts: ServeOptions) => {
      const flags = await checkServeFlags(opts);
      const egress = await egressFlags(opts.egress, opts.caCert, opts.network, opts.egressAllowPrivate);
      const tools = await asFlagError(() =>
        opts.tools === undefined ? undefined : toolSetsFlag(opts.tools, allTools(aiderTools)),
      );
      const served = pickTools(allTools(aiderTools), tools ?? defaultToolSets(opts.keepSessions));
      // The model is checked against the keys here, still before anything starts.
      const extensions = await asFlagError(() =>
        serverExtensions({
          aiderServed: served.some((t) => t.name === "aider_ai_code"),
          model: opts.model,
          llm: opts.llm,
          envFile: flags.keysFile,
          offlineScript: flags.offlineScript,
          maxLlmRequests: flags.maxLlmRequests,
          maxLlmCostUsd: flags.maxLlmCostUsd,
        }),
      );
      const server = await DrydockServer.start({
        engine: flags.engine,
        repo: opts.repo,
        allowedRepos: opts.allowRepo,
        maxSessions: flags.maxSessions,
        memoryReserveMB: flags.memoryReserveMB,
        image: opts.image,
        environment: opts.env,
        environmentRegistry: opts.envRegistry,
        caCert: opts.caCert,
        allowBaseImages: checkAllowBaseImages(opts.allowBaseImage),
        pull: checkPullFlag(opts.pull),
        keepSessions: opts.keepSessions,
        keepTtlMs: flags.keepTtlMs,
        envFile: flags.keysFile,
        sessionOptions: {
          runtime: flags.runtime,
          network: opts.network,
          memoryMB: flags.memoryMB,
          cpus: flags.cpus,
          commandTimeoutMs: flags.commandTimeoutMs,
          maxOutputBytesLimit: flags.maxOutputBytesLimit,
          maxCheckpoints: flags.maxCheckpoints,
          checkpointMaxBytes: flags.checkpointMaxBytes,
          includeUntrackedDependencies: opts.includeUntrackedDependencies === true,
          ...egress,
        },
        pool: { size: flags.pool, maxSize: flags.poolMax, ttlMs: flags.poolTtlMs },
        tools,
        outputSchemas: opts.outputSchemas === true,
        ...extensions,
      });
      if (!opts.http) {
        await serveStdio(server);
        return;
      }
      const handle = await serveHttp(server, {
        host: opts.host,
        port: flags.port,
        allowedHosts: opts.allowHost,
        token: process.env.DRYDOCK_TOKEN || undefined,
        disconnectGraceMs: flags.disconnectGraceMs,
      });
      printErr(`[drydock] serving MCP on ${handle.url}\n`);
      printErr(
        handle.tokenFile
          ? `[drydock] bearer token written to ${handle.tokenFile} (mode 0600)\n`
          : "[drydock] bearer token: the value of DRYDOCK_TOKEN\n",
      );
      // The key itself is not printed: whatever spawned the server may be reading its stderr.
      printErr(
        `[drydock] live view: ${handle.liveUrl} (its own key, not the bearer token, written to ${handle.liveKeyFile} (mode 0600); sign in once: open "${handle.liveUrl}?token=$(cat ${handle.liveKeyFile})")\n`,
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
