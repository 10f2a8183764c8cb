/** The built CLI (dist/cli/main.js) run as a user runs it, its output collected. */
import { spawn } from "node:child_process";
import { join } from "node:path";

export const CLI = join(process.cwd(), "dist", "cli", "main.js");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `drydock ARGS` with the test's environment and `env` over it, no standard input. */
export function runDrydock(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}
