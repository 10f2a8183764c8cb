/**
 * A stdio client that dies without a word (killed, crashed, `os._exit`): its pipes break under
 * drydock, which must still remove the session box and the warm boxes before it exits.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_OWNER } from "../../src/engine/labels.js";
import { tempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

/**
 * The client: starts `drydock serve` with all three streams on pipes, creates a session, prints
 * the server's pid and the session, and exits at once without closing anything itself.
 */
const CLIENT = `
import json, os, subprocess, sys
node, cli, repo, image = sys.argv[1:5]
p = subprocess.Popen([node, cli, "serve", "--repo", repo, "--image", image, "--pool", "1"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
def send(m):
    p.stdin.write((json.dumps(m) + "\\n").encode()); p.stdin.flush()
def reply(i):
    while True:
        line = p.stdout.readline()
        if not line: raise SystemExit("drydock closed stdout: " + p.stderr.read().decode())
        m = json.loads(line)
        if m.get("id") == i: return m
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {}, "clientInfo": {"name": "dies", "version": "1"}}})
reply(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "session_create", "arguments": {}}})
print(json.dumps({"pid": p.pid, "reply": reply(2)}), flush=True)
os._exit(0)
`;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("a stdio client that dies abruptly", () => {
  it("takes the session box and the warm boxes with it, and drydock exits", async () => {
    using repo = tempRepo();
    const state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const engine = await Engine.connect();
    let pid = 0;
    const boxesOfServer = async () =>
      (await engine.listBoxes(LABEL_OWNER)).filter(
        (b) => b.labels[LABEL_OWNER]?.split("/")[1] === String(pid),
      );
    try {
      const client = spawnSync(
        "python3",
        ["-c", CLIENT, process.execPath, cli, repo.path, inject("sandboxImage")],
        { encoding: "utf8", env: { ...process.env, DRYDOCK_STATE_DIR: state }, timeout: 120_000 },
      );
      expect(client.status, client.stderr).toBe(0);
      const parsed = JSON.parse(client.stdout) as {
        pid: number;
        reply: { result: { structuredContent: { session_id: string } } };
      };
      pid = parsed.pid;
      expect(parsed.reply.result.structuredContent.session_id).toMatch(/^[0-9a-f]{12}$/);
      await expect.poll(() => processAlive(pid), { timeout: 15_000 }).toBe(false);
      expect(await boxesOfServer()).toEqual([]);
    } finally {
      // Left behind only when the check above failed: remove them, so no test pays for it.
      if (pid) await Promise.all((await boxesOfServer()).map((b) => engine.remove(b.id)));
      rmSync(state, { recursive: true, force: true });
    }
  });
});
