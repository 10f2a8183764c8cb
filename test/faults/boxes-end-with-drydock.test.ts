/**
 * A drydock killed without a word (SIGKILL: an MCP SDK closing its server, an OOM kill) leaves no
 * box running: each box's first process reads a stdin only drydock's attach holds open, so the
 * box ends when drydock does. A box kept for a later server (`--keep-sessions`) stays up.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, inject, it } from "vitest";
import { LABEL_STATE } from "../../src/engine/labels.js";
import { tempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
let state: string | undefined;

afterEach(() => {
  if (!state) return;
  const ids = boxes(state, true);
  if (ids.length) execFileSync("docker", ["rm", "-f", ...ids], { stdio: "ignore" });
  rmSync(state, { recursive: true, force: true });
  state = undefined;
});

/** This test's boxes, by its state directory's label: running ones, or all. */
function boxes(dir: string, all = false): string[] {
  const out = execFileSync(
    "docker",
    ["ps", ...(all ? ["-a"] : []), "-q", "--filter", `label=${LABEL_STATE}=${dir}`],
    { encoding: "utf8" },
  );
  return out.split("\n").filter(Boolean);
}

/** `drydock serve` over stdio with a session and a warm box; the server's pid. */
async function serveWithASession(repo: string, args: string[]): Promise<{ pid: number; client: Client }> {
  state = mkdtempSync(join(tmpdir(), "drydock-state-"));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, "serve", "--repo", repo, "--image", inject("sandboxImage"), "--pool", "1", ...args],
    env: { ...process.env, DRYDOCK_STATE_DIR: state } as Record<string, string>,
    stderr: "ignore",
  });
  const client = new Client({ name: "killed", version: "1" });
  await client.connect(transport);
  const reply = await client.callTool({ name: "bash", arguments: { command: "echo up" } });
  expect((reply.structuredContent as { stdout: string }).stdout).toBe("up\n");
  return { pid: transport.pid!, client };
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return check();
}

describe("boxes and a drydock killed with SIGKILL", () => {
  it("end with it: the session's box and the warm one stop within seconds", async () => {
    using repo = tempRepo();
    const { pid } = await serveWithASession(repo.path, []);
    const dir = state!;
    // The session's box, and the warm pool's once it is filled.
    expect(await waitFor(() => boxes(dir).length >= 2, 60_000)).toBe(true);
    process.kill(pid, "SIGKILL");
    expect(
      await waitFor(() => boxes(dir).length === 0, 20_000),
      `still running: ${boxes(dir).join(" ")}`,
    ).toBe(true);
  });

  it("stay up when kept for a later server (--keep-sessions)", async () => {
    using repo = tempRepo();
    const { pid } = await serveWithASession(repo.path, ["--keep-sessions"]);
    const dir = state!;
    expect(await waitFor(() => boxes(dir).length >= 1, 60_000)).toBe(true);
    const before = boxes(dir);
    process.kill(pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 5_000));
    expect(boxes(dir)).toEqual(expect.arrayContaining(before));
  });
});
