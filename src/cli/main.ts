#!/usr/bin/env node
import { Command } from "commander";
import { describeError, FlagError } from "../util/errors.js";
import { registerDoctorCommand } from "./doctor-command.js";
import { registerEnvCommand } from "./env-command.js";
import { registerEvalCommand } from "./eval-command.js";
import { registerImageCommand } from "./image-command.js";
import { registerMockLlmCommand } from "./mock-llm-command.js";
import { registerRunCommand } from "./run-command.js";
import { registerServeCommand } from "./serve-command.js";
import { registerSessionsCommand } from "./sessions-command.js";
import { watchStdout } from "./stdout-closed.js";
import { registerTasksCommand } from "./tasks-command.js";
import { printErr, printOut } from "./terminal-out.js";

watchStdout();

const program = new Command()
  .name("drydock")
  .description("hardened Docker boxes for coding agents, served over MCP")
  .version("0.1.0")
  .showHelpAfterError("(see --help)")
  // Help and usage errors print through the one escaper too (an error may quote an argument);
  // subcommands take this over when they are made, so it comes before they are registered.
  .configureOutput({ writeOut: printOut, writeErr: printErr })
  // Options after a subcommand belong to it (`eval validate --out X` is validate's --out).
  .enablePositionalOptions()
  // A usage error (unknown flag, missing argument) exits 2, as does a flag drydock refuses.
  .exitOverride((error) => process.exit(error.exitCode === 1 ? 2 : error.exitCode));

registerImageCommand(program);
registerEnvCommand(program);
registerDoctorCommand(program);
registerRunCommand(program);
registerServeCommand(program);
registerSessionsCommand(program);
registerTasksCommand(program);
registerMockLlmCommand(program);
registerEvalCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  // An error's message may quote the box (a command, a path, a program's output).
  printErr(`drydock: ${describeError(error)}\n`);
  if (error instanceof FlagError) process.exit(2);
  process.exit(typeof process.exitCode === "number" && process.exitCode !== 0 ? process.exitCode : 1);
});
