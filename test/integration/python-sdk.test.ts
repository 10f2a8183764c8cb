/**
 * drydock from the official MCP Python SDK (scripts/install-python-mcp.sh puts the pinned version
 * in a cache): the text a Python client shows for a bash reply is what a terminal shows, and the
 * structured reply carries stdout and stderr apart.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempRepo } from "../helpers/repos.js";

const run = promisify(execFile);
const VENV = process.env.DRYDOCK_PYTHON_MCP_DIR ?? join(homedir(), ".cache", "drydock", "python-mcp-2.3.0");

describe("the MCP Python SDK", () => {
  it("shows a bash reply as the lines a terminal shows, then the exit code", async () => {
    const python = join(VENV, "bin", "python");
    expect(
      existsSync(python),
      `${python} is missing: run bash scripts/install-python-mcp.sh (npm test runs it)`,
    ).toBe(true);
    using repo = tempRepo();
    const { stdout } = await run(
      python,
      [
        join(process.cwd(), "test", "fixtures", "python-mcp", "call_tool.py"),
        join(process.cwd(), "dist", "cli", "main.js"),
        repo.path,
        "bash",
        JSON.stringify({ command: "printf 'one\\ntwo\\n'; echo oops >&2; sh -c 'exit 4'" }),
      ],
      { cwd: repo.path, timeout: 120_000 },
    );
    const reply = JSON.parse(stdout) as {
      text: string[];
      structured: Record<string, unknown>;
      is_error: boolean;
    };
    expect(reply.is_error).toBe(false);
    expect(reply.text).toHaveLength(1);
    const lines = reply.text[0]!.split("\n");
    expect(lines.at(-1)).toBe("[exit code 4]");
    expect(lines.slice(0, -1).sort()).toEqual(["one", "oops", "two"]);
    expect(reply.structured).toMatchObject({ stdout: "one\ntwo\n", stderr: "oops\n", exit_code: 4 });
  });
});
