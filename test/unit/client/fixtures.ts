import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { StdioServerConfig } from "../../../src/index.js";
import type { FakeMode } from "../../helpers/fake-mcp-server.mjs";

export const fakeServerPath = fileURLToPath(new URL("../../helpers/fake-mcp-server.mjs", import.meta.url));

/** Spawns the fake MCP server over stdio with `node`, in the given mode. */
export function fakeStdioServer(mode: FakeMode): StdioServerConfig {
  return {
    transport: "stdio",
    command: process.execPath,
    args: [fakeServerPath, "--mode", mode],
    stderr: "ignore",
  };
}

/** True while a process with this id exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `condition` every 20 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A temp directory (real path) holding a git repository with `files`, removed by `dispose`. */
export interface TempRepo {
  /** The parent temp directory; `root` is `<base>/repo`, so `<base>` is outside the repository. */
  base: string;
  root: string;
  /** Writes a file (making its directories) and, unless `track` is false, `git add`s it. */
  write(path: string, content: string | Buffer, track?: boolean): string;
  dispose(): void;
}

export function makeTempRepo(files: Record<string, string> = {}): TempRepo {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "drydock-bridge-")));
  const root = join(base, "repo");
  mkdirSync(root);
  execFileSync("git", ["init", "-q", root]);
  const write = (path: string, content: string | Buffer, track = true): string => {
    const absolute = join(root, path);
    mkdirSync(dirname(absolute), { recursive: true });
    writeFileSync(absolute, content);
    if (track) execFileSync("git", ["add", "--", path], { cwd: root });
    return absolute;
  };
  for (const [path, content] of Object.entries(files)) write(path, content);
  return { base, root, write, dispose: () => rmSync(base, { recursive: true, force: true }) };
}
