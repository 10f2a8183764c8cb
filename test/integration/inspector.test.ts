import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import { tempRepo } from "../helpers/repos.js";

const run = promisify(execFile);
const cli = join(process.cwd(), "dist", "cli", "main.js");
const inspectorCli = join(process.cwd(), "node_modules/@modelcontextprotocol/inspector/cli/build/cli.js");

/** The Inspector CLI against `drydock serve` on `repo` (no warm pool), with `args` after serve's own; its stdout. */
async function inspector(repo: string, args: string[], timeout = 60_000): Promise<string> {
  const serve = [cli, "serve", "--repo", repo, "--image", inject("sandboxImage"), "--pool", "0"];
  const { stdout } = await run(
    process.execPath,
    [inspectorCli, "--cli", process.execPath, ...serve, ...args],
    {
      cwd: repo,
      timeout,
    },
  );
  return stdout;
}

/** The default tool set, `core`, in the server's order. */
const CORE = [
  "session_create",
  "session_destroy",
  "session_diff",
  "session_apply",
  "bash",
  "task_done",
  "file_editor",
  "code_search",
  "git_diff",
];

describe("the MCP Inspector CLI", () => {
  it("lists drydock's default tools over stdio: the core set, within 12 KB", async () => {
    using repo = tempRepo();
    const stdout = await inspector(repo.path, ["--method", "tools/list"]);
    const { tools } = JSON.parse(stdout) as { tools: Array<{ name: string; inputSchema: unknown }> };
    expect(tools.map((t) => t.name)).toEqual(CORE);
    for (const t of tools) expect(t.inputSchema).toBeTruthy();
    expect(Buffer.byteLength(JSON.stringify({ tools }))).toBeLessThanOrEqual(12 * 1024);
  });

  it("shows a bash reply as the text a terminal shows, not escaped JSON", async () => {
    using repo = tempRepo();
    const stdout = await inspector(
      repo.path,
      [
        "--method",
        "tools/call",
        "--tool-name",
        "bash",
        "--tool-arg",
        "command=printf 'one\\ntwo\\n'; echo oops >&2; sh -c 'exit 3'",
      ],
      120_000,
    );
    const reply = JSON.parse(stdout) as {
      content: Array<{ type: string; text: string }>;
      structuredContent: Record<string, unknown>;
    };
    // Real lines (stdout and stderr merged, in arrival order, which may swap), then the status.
    const lines = reply.content[0]!.text.split("\n");
    expect(lines.at(-1)).toBe("[exit code 3]");
    expect(lines.slice(0, -1).sort()).toEqual(["one", "oops", "two"]);
    expect(reply.structuredContent).toMatchObject({ stdout: "one\ntwo\n", stderr: "oops\n", exit_code: 3 });
  });
});

describe("drydock serve --tools", () => {
  it("lists only the picked sets over stdio", async () => {
    using repo = tempRepo();
    const stdout = await inspector(repo.path, ["--tools", "minimal,json_editor", "--method", "tools/list"]);
    const { tools } = JSON.parse(stdout) as { tools: Array<{ name: string }> };
    expect(tools.map((t) => t.name)).toEqual([
      "session_create",
      "session_list",
      "session_destroy",
      "session_diff",
      "session_apply",
      "bash",
      "file_editor",
      "json_editor",
      "git_diff",
    ]);
  });

  it("adds session_resume to the default of a server that keeps sessions", async () => {
    using repo = tempRepo();
    const stdout = await inspector(repo.path, ["--keep-sessions", "--method", "tools/list"]);
    const { tools } = JSON.parse(stdout) as { tools: Array<{ name: string }> };
    expect(tools.map((t) => t.name)).toEqual([...CORE.slice(0, 4), "session_resume", ...CORE.slice(4)]);
  });

  it("still lists every tool with --tools all", async () => {
    using repo = tempRepo();
    const stdout = await inspector(repo.path, ["--tools", "all", "--method", "tools/list"]);
    const { tools } = JSON.parse(stdout) as { tools: Array<{ name: string }> };
    const names = tools.map((t) => t.name);
    expect(names).toHaveLength(33);
    for (const name of ["str_replace_based_edit_tool", "aider_ai_code", "get_current_task", "session_fork"]) {
      expect(names).toContain(name);
    }
  });

  it("refuses an unknown set before starting, naming the sets (exit 2)", async () => {
    using repo = tempRepo();
    const failed = await run(
      process.execPath,
      [cli, "serve", "--repo", repo.path, "--tools", "minimal,shel"],
      {
        cwd: repo.path,
        timeout: 60_000,
      },
    ).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toMatch(
      /--tools: "shel" is neither a tool set nor a tool of this server; sets are core, minimal, /,
    );
  });
});
