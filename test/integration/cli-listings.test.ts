/**
 * `drydock sessions list` (a header; age, owner, whether it is alive, repository; this state
 * directory's boxes unless --all) and `drydock tasks show` errors (one line, no help text).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { SessionRow } from "../../src/cli/session-rows.js";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

async function drydock(
  state: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args], {
      env: { ...process.env, DRYDOCK_STATE_DIR: state },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("drydock sessions list", () => {
  let repo: TempRepo;
  let mine: string;
  let other: string;
  let client: Client;

  beforeAll(async () => {
    repo = tempRepo();
    mine = mkdtempSync(join(tmpdir(), "drydock-state-"));
    other = mkdtempSync(join(tmpdir(), "drydock-state-"));
    client = new Client({ name: "listing", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage"), "--pool", "0"],
        env: { ...process.env, DRYDOCK_STATE_DIR: mine } as Record<string, string>,
        stderr: "ignore",
      }),
    );
  });

  afterAll(async () => {
    await client?.close();
    repo?.[Symbol.dispose]();
    for (const dir of [mine, other]) rmSync(dir, { recursive: true, force: true });
  });

  it("shows this state directory's sessions under a header, with age, owner, liveness and repository", async () => {
    const id = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
    const listed = await drydock(mine, "sessions", "list");
    expect(listed.code, listed.stderr).toBe(0);
    const [header, ...lines] = listed.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^SESSION\s+BOX\s+STATE\s+AGE\s+OWNER\s+ALIVE\s+REPOSITORY$/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^${id}\\s+[0-9a-f]{12}\\s+running\\s+\\d+s\\s+\\S+/\\d+\\s+yes\\s+${realpathSync(repo.path)}$`,
      ),
    );

    // Another state directory sees none of it, unless it asks for every box.
    const elsewhere = await drydock(other, "sessions", "list");
    expect(elsewhere.stdout).toBe(
      `no drydock boxes of ${other}; --all lists every drydock box on the engine\n`,
    );
    const all = JSON.parse(
      (await drydock(other, "sessions", "list", "--all", "--json")).stdout,
    ) as SessionRow[];
    expect(all.find((r) => r.session === id)).toMatchObject({
      repo: realpathSync(repo.path),
      kind: "session",
      alive: true,
      orphan: false,
      state_dir: mine,
    });

    // The record goes with the session.
    ok(await client.callTool({ name: "session_destroy", arguments: { session_id: id } }));
    expect(existsSync(join(mine, "sessions", `${id}.json`))).toBe(false);
    expect((await drydock(mine, "sessions", "list")).stdout).toMatch(/^no drydock boxes of /);
  });
});

describe("drydock tasks show", () => {
  it("says what is missing in one line, without the help text", async () => {
    const dir = mkdtempSync(join(tmpdir(), "drydock-tasks-"));
    try {
      const named = await drydock(dir, "tasks", "show", "nope", "--dir", dir);
      expect(named.code).toBe(1);
      expect(named.stderr).toBe(
        `drydock: session nope has no stored task stack in ${dir}; list stored stacks with \`drydock tasks list\`\n`,
      );
      const latest = await drydock(dir, "tasks", "show", "--dir", dir);
      expect(latest.code).toBe(1);
      expect(latest.stderr).toBe(
        `drydock: no task stacks stored in ${dir}; they appear once an agent creates a task\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
