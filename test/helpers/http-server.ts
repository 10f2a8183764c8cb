import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { inject } from "vitest";

export interface SpawnedHttpServer {
  child: ChildProcess;
  /** The MCP endpoint the server printed, e.g. http://127.0.0.1:PORT/mcp. */
  url: string;
}

/** Starts the built `drydock serve --http` on a free port and waits for the URL it prints. */
export async function spawnHttpServer(options: {
  repo: string;
  env: NodeJS.ProcessEnv;
  args?: string[];
}): Promise<SpawnedHttpServer> {
  const cli = join(process.cwd(), "dist", "cli", "main.js");
  const child = spawn(
    process.execPath,
    [
      cli,
      "serve",
      "--http",
      "--port",
      "0",
      "--repo",
      options.repo,
      "--image",
      inject("sandboxImage"),
      // Every tool unless the test picks its own: tests here reach tools beyond the default set.
      ...(options.args?.includes("--tools") ? [] : ["--tools", "all"]),
      ...(options.args ?? []),
    ],
    { env: options.env, stdio: ["ignore", "ignore", "pipe"] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /serving MCP on (\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.on("exit", () => reject(new Error(`server exited: ${err}`)));
  });
  return { child, url };
}

/** SIGTERM, and wait for the process to exit. */
export async function stopServer(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}
