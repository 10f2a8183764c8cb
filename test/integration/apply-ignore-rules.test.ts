/**
 * session_apply and ignore rules: a box that deletes a .gitignore that is untracked on the host
 * would, applied to the working tree, make the files it hid (a .env) visible to git and to the next
 * session's copy. Worktree mode refuses it unless allow_ignore_changes; every mode warns.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { failure, inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { git, tempRepo } from "../helpers/repos.js";

describe("session_apply with ignore-rule changes", () => {
  it("refuses a deleted untracked .gitignore in worktree mode unless allow_ignore_changes, and warns", async () => {
    using repo = tempRepo({ "README.md": "hello\n" });
    writeFileSync(join(repo.path, ".gitignore"), ".env\n");
    writeFileSync(join(repo.path, ".env"), "API_KEY=secret\n");
    await using drydock = await inMemoryDrydock({ repo: repo.path });
    const call = (name: string, args: Record<string, unknown>) =>
      drydock.client.callTool({ name, arguments: args });
    const copied = ok(await call("bash", { command: "ls -A; rm .gitignore; echo more >> README.md" }));
    // The snapshot held the untracked .gitignore and left out what it ignores.
    expect(copied.stdout).toMatch(/\.gitignore/);
    expect(copied.stdout).not.toMatch(/\.env/);

    const refused = failure(await call("session_apply", { mode: "worktree" }));
    expect(refused).toMatch(/\.gitignore deleted/);
    expect(refused).toMatch(/allow_ignore_changes/);
    expect(existsSync(join(repo.path, ".gitignore"))).toBe(true);
    expect(git(repo.path, "status", "--porcelain")).not.toMatch(/\.env|README/);

    const branch = ok(await call("session_apply", { mode: "branch" }));
    // The branch sits on the last commit, which never had the .gitignore: said as a second warning.
    expect(branch.warnings).toEqual([
      expect.stringMatching(/ignore rules \(\.gitignore deleted\)/),
      expect.stringMatching(/sits on your last commit/),
    ]);
    expect(existsSync(join(repo.path, ".gitignore"))).toBe(true);

    const applied = ok(await call("session_apply", { mode: "worktree", allow_ignore_changes: true }));
    expect(applied.warnings).toEqual([expect.stringMatching(/\.gitignore deleted/)]);
    expect(existsSync(join(repo.path, ".gitignore"))).toBe(false);
    expect(git(repo.path, "status", "--porcelain")).toMatch(/\?\? \.env/);
  });
});
