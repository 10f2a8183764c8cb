import type { Command } from "commander";
import { InvalidArgumentError } from "../util/errors.js";
import { MockLlmServer } from "../gateway/mock-llm-server.js";
import { DEFAULT_SCRIPT_PATH, OFFLINE_MODEL, OfflineModel } from "../gateway/offline-model.js";

/** `drydock mock-llm`: the offline model on a local port, for aider or any OpenAI client. */
export function registerMockLlmCommand(program: Command): void {
  program
    .command("mock-llm")
    .description(
      "Serve the offline model (OpenAI-compatible chat completions answered from a script) on a local port until interrupted",
    )
    .option("--port <n>", "port to listen on (0: any free port)", "0")
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--script <file>", "rules file (docs/offline-model.md)", DEFAULT_SCRIPT_PATH)
    .action(async (options: { port: string; host: string; script: string }) => {
      const port = Number(options.port);
      if (!Number.isInteger(port) || port < 0 || port > 65_535) {
        throw new InvalidArgumentError(
          "--port",
          `${JSON.stringify(options.port)} is not a port number (0-65535)`,
        );
      }
      const model = OfflineModel.fromFile(options.script);
      const server = await MockLlmServer.start({ model, host: options.host, port });
      process.stderr.write(
        `drydock mock-llm: serving ${model.script.rules.length} rules from ${model.script.source}\n` +
          `  base URL ${server.url}  (aider: --model openai/${OFFLINE_MODEL} --openai-api-base ${server.url} --openai-api-key x)\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          resolve();
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      });
      await server.close();
    });
}
