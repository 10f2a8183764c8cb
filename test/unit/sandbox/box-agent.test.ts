/**
 * The box agent as the host sends it (box-agent.ts): its files read from box-agent/, the two lines
 * its loader and bootstrap read, and, with this machine's python3, the agent answering over pipes
 * as it does in a box. Its own tests are Python (box-agent/tests, run by scripts/check-box-code.sh).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { boxAgentStart } from "../../../src/sandbox/box-agent.js";

describe("the box agent as sent", () => {
  it("is every module of box-agent/drydock_box, after the bootstrap, on two lines", () => {
    const agent = boxAgentStart();
    expect(Object.keys(agent.modules)).toEqual(
      expect.arrayContaining([
        "drydock_box/__init__.py",
        "drydock_box/channel.py",
        "drydock_box/fork.py",
        "drydock_box/gitutil.py",
        "drydock_box/restore.py",
        "drydock_box/tree.py",
        "drydock_box/watch.py",
      ]),
    );
    const lines = agent.input.split("\n");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]!)).toContain("def _boot():");
    expect(JSON.parse(lines[1]!)).toEqual(agent.modules);
    expect(agent.loader).toBe("import sys,json;exec(json.loads(sys.stdin.buffer.readline()))");
    expect(boxAgentStart()).toBe(agent);
  });

  it("ships in the npm package", () => {
    const files = (
      JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
        files: string[];
      }
    ).files;
    expect(files).toEqual(
      expect.arrayContaining(["box-agent/bootstrap.py", "box-agent/loader.py", "box-agent/drydock_box/*.py"]),
    );
  });

  it("answers a request over pipes, started as in a box", async () => {
    const agent = boxAgentStart();
    const child = spawn("python3", ["-I", "-S", "-c", agent.loader], { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    const ended = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.write(agent.input);
    child.stdin.write(`${JSON.stringify({ id: 1, argv: ["cat"], stdin: 2, cap: 100 })}\nhi`);
    for (let i = 0; i < 200 && !Buffer.concat(out).includes("hi"); i++)
      await new Promise((r) => setTimeout(r, 25));
    child.stdin.end();
    expect(await ended).toBe(0);
    expect(Buffer.concat(out).toString()).toBe(
      '{"ready": true}\n{"id": 1, "exit": 0, "out": 2, "err": 0, "truncated": false}\nhi',
    );
  });
});
