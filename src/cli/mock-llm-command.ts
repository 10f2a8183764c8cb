import type { Command } from "commander";
import { InvalidArgumentError } from "../util/errors.js";
import { MockLlmServer } from "../gateway/mock-llm-server.js";
import { DEFAULT_SCRIPT_PATH, OFFLINE_MODEL, OfflineModel } from "../gateway/offline-model.js";
import { printErr } from "./terminal-out.js";

export interface MockLlmOptions {
  port: string;
  host: string;
  script: string;
}

/** `drydock mock-llm`: the offline model on a local port, for aider or any OpenAI client. */
export function registerMockLlmCommand(program: Command): void {
  program
    .command("mock-llm")
    .description(
      "Serve the offline model (OpenAI-compatible chat completions answered from a script) on a local port until interrupted",
    )
    .option("--port <n>", "port to listen on (0: any free port)", "0")
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--script <file>", "rules file (see docs/aider.md, The offline model)", DEFAULT_SCRIPT_PATH)
    .action((options: MockLlmOptions) => runMockLlm(options, untilSignalled()));
}

/** Serves until `until` resolves; says where on stderr (stdout stays free for piping). */
export async function runMockLlm(
  options: MockLlmOptions,
  until: Promise<void>,
  say: (line: string) => void = (line) => printErr(line + "\n"),
): Promise<void> {
  const port = Number(options.port);
  if (options.port.trim() === "" || !Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidArgumentError(
      "--port",
      `${JSON.stringify(options.port)} is not a port number (0-65535)`,
    );
  }
  const model = OfflineModel.fromFile(options.script);
  const server = await MockLlmServer.start({ model, host: options.host, port });
  say(`drydock mock-llm: ${model.script.rules.length} rules from ${model.script.source}`);
  say(`drydock mock-llm: listening on ${server.url}`);
  say(
    `  aider --model openai/${OFFLINE_MODEL} --openai-api-base ${server.url} --openai-api-key x --edit-format diff`,
  );
  try {
    await until;
  } finally {
    await server.close();
  }
}

function untilSignalled(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
