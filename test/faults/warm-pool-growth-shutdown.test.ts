/**
 * A drydock closed, or killed with SIGKILL, while its warm pool grows past its base leaves no box:
 * a box being made stops at its next step and is removed on close; on a kill every box's first
 * process ends with drydock's attach, and the next start removes any box left created.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { LABEL_STATE } from "../../src/engine/labels.js";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist/cli/main.js");

let state: string | undefined;
afterEach(() => {
  if (!state) return;
  const ids = stateBoxes(state, true);
  if (ids.length) execFileSync("docker", ["rm", "-f", ...ids], { stdio: "ignore" });
  rmSync(state, { recursive: true, force: true });
  state = undefined;
});

/** Boxes of a state directory, by its label: running ones, or all. */
function stateBoxes(dir: string, all = false): string[] {
  const out = execFileSync(
    "docker",
    ["ps", ...(all ? ["-a"] : []), "-q", "--filter", `label=${LABEL_STATE}=${dir}`],
    { encoding: "utf8" },
  );
  return out.split("\n").filter(Boolean);
}

/**
 * `drydock serve --pool 1 --pool-max 6` over stdio, after a burst of six sessions (made and
 * removed) so that its pool grows; resolves once the log says a box past the base is being made.
 */
async function serveGrowing(repo: string): Promise<{ client: Client; pid: number; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "drydock-state-"));
  state = dir;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, "serve", "--repo", repo, "--image", sandboxImage(), "--pool", "1", "--pool-max", "6"],
    env: { ...process.env, DRYDOCK_STATE_DIR: dir } as Record<string, string>,
    stderr: "pipe",
  });
  let log = "";
  transport.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString()));
  const client = new Client({ name: "burst", version: "1" });
  await client.connect(transport);
  for (let i = 0; i < 6; i++) {
    const made = ok(await client.callTool({ name: "session_create", arguments: {} }));
    ok(await client.callTool({ name: "session_destroy", arguments: { session_id: made.session_id } }));
  }
  await expect.poll(() => log, { timeout: 60_000, interval: 100 }).toMatch(/so it makes one more/);
  return { client, pid: transport.pid!, dir };
}

describe("a drydock stopped while its warm pool grows", () => {
  it("leaves no box when drydock is closed while its pool grows", async () => {
    using repo = tempRepo();
    const { client, pid, dir } = await serveGrowing(repo.path);
    expect(stateBoxes(dir).length).toBeGreaterThan(0);
    await client.close();
    await expect.poll(() => isAlive(pid), { timeout: 60_000, interval: 250 }).toBe(false);
    expect(stateBoxes(dir, true)).toEqual([]);
  });

  it("leaves no box running when drydock is killed while its pool grows, and none once the next one starts", async () => {
    using repo = tempRepo();
    const { pid, dir } = await serveGrowing(repo.path);
    process.kill(pid, "SIGKILL");
    await expect.poll(() => stateBoxes(dir), { timeout: 30_000, interval: 250 }).toEqual([]);
    // A box created but not started when the kill came is removed by the next start.
    const next = new StdioClientTransport({
      command: process.execPath,
      args: [cli, "serve", "--repo", repo.path, "--image", sandboxImage(), "--pool", "0"],
      env: { ...process.env, DRYDOCK_STATE_DIR: dir } as Record<string, string>,
      stderr: "ignore",
    });
    const client = new Client({ name: "next", version: "1" });
    await client.connect(next);
    try {
      expect(stateBoxes(dir, true)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
