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

/**
 * A client that stops reading drydock's stdout but keeps stdin open: the next reply drydock
 * writes meets a broken pipe (EPIPE), which alone must stop it cleanly. Prints the server's pid
 * and how it ended.
 */
const STOPS_READING = `
import json, os, subprocess, sys
node, cli, repo, image = sys.argv[1:5]
p = subprocess.Popen([node, cli, "serve", "--repo", repo, "--image", image, "--pool", "1"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(m):
    p.stdin.write((json.dumps(m) + "\\n").encode()); p.stdin.flush()
def reply(i):
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i: return m
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {}, "clientInfo": {"name": "deaf", "version": "1"}}})
reply(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "session_create", "arguments": {}}})
reply(2)
p.stdout.close()
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": "seq 1 20000"}}})
try:
    code = p.wait(timeout=60)
except subprocess.TimeoutExpired:
    code = "still running"
print(json.dumps({"pid": p.pid, "exit": code}), flush=True)
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

  it("stops cleanly on a broken stdout (EPIPE) while stdin stays open, taking its boxes with it", async () => {
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
        ["-c", STOPS_READING, process.execPath, cli, repo.path, inject("sandboxImage")],
        { encoding: "utf8", env: { ...process.env, DRYDOCK_STATE_DIR: state }, timeout: 150_000 },
      );
      expect(client.status, client.stderr).toBe(0);
      const ended = JSON.parse(client.stdout) as { pid: number; exit: number | string };
      pid = ended.pid;
      // It exited by itself, with status 0 (a crash on EPIPE would be 1), while its stdin was open.
      expect(ended.exit).toBe(0);
      expect(await boxesOfServer()).toEqual([]);
    } finally {
      if (pid) await Promise.all((await boxesOfServer()).map((b) => engine.remove(b.id)));
      rmSync(state, { recursive: true, force: true });
    }
  });
});
