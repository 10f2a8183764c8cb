import { describe, expect, it } from "vitest";
import { failure, inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { git, tempRepo } from "../helpers/repos.js";

describe("session_create limits", () => {
  it("refuses more memory or CPUs than the server grants, naming the server's limit", async () => {
    using repo = tempRepo();
    await using drydock = await inMemoryDrydock({
      repo: repo.path,
      pool: { size: 0 },
      sessionOptions: { memoryMB: 1024 },
    });
    const memory = failure(
      await drydock.client.callTool({ name: "session_create", arguments: { memory_mb: 100_000 } }),
    );
    expect(memory).toMatch(
      /^memory_mb: 100000 is above this server's limit of 1024 MiB; ask for 1024 or less/,
    );
    const cpus = failure(await drydock.client.callTool({ name: "session_create", arguments: { cpus: 100 } }));
    expect(cpus).toMatch(/^cpus: 100 is above this server's limit of \d+/);
  });
});

describe("session_create on a ref", () => {
  it("refuses a ref that names no commit, or looks like an option, as a bad argument naming ref", async () => {
    using repo = tempRepo({ "README.md": "hello\n", ".drydock/environment.yaml": "setup:\n  - echo hi\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const create = async (ref: string) =>
      failure(await drydock.client.callTool({ name: "session_create", arguments: { ref } }));
    expect(await create("no-such-branch")).toMatch(
      /^ref: "no-such-branch" names no commit in .*; give a branch or tag name .*, HEAD, or a commit id/,
    );
    expect(await create("--all")).toMatch(
      /^ref: "--all" is not a branch, tag or commit id; give a branch or tag name/,
    );
  });
});

describe("session_apply on a branch that exists", () => {
  it("refuses naming replace_branch, and with replace_branch moves the branch to the new commit", async () => {
    using repo = tempRepo({ "a.txt": "one\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const { client } = drydock;
    const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });

    ok(await call("bash", { command: "echo two > a.txt" }));
    const first = ok(await call("session_apply", { branch: "drydock/work" }));
    expect(first.branch).toBe("drydock/work");

    ok(await call("bash", { command: "echo three > a.txt" }));
    const refused = failure(await call("session_apply", { branch: "drydock/work" }));
    expect(refused).toMatch(
      /^branch: drydock\/work already exists in .*; pass another branch, or replace_branch: true to move it to the new commit/,
    );
    expect(refused).not.toContain("replaceBranch");
    expect(git(repo.path, "show", "drydock/work:a.txt")).toBe("two\n");

    const moved = ok(await call("session_apply", { branch: "drydock/work", replace_branch: true }));
    expect(moved.commit).not.toBe(first.commit);
    expect(git(repo.path, "show", "drydock/work:a.txt")).toBe("three\n");

    expect(failure(await call("session_apply", { mode: "worktree", replace_branch: true }))).toMatch(
      /^replace_branch: applies to mode "branch" only/,
    );
  });
});

describe("--keep-sessions and a client that goes away", () => {
  it("keeps its session for the client that resumes it with its secret, counted against --max-sessions until then", async () => {
    using repo = tempRepo();
    await using drydock = await inMemoryDrydock({
      repo: repo.path,
      pool: { size: 0 },
      keepSessions: true,
      maxSessions: 1,
    });
    const a = drydock.client;
    const created = ok(await a.callTool({ name: "session_create", arguments: {} }));
    const id = created.session_id as string;
    ok(await a.callTool({ name: "bash", arguments: { session_id: id, command: "echo kept > note.txt" } }));
    await drydock.server.disconnectClient("test");

    const b = await drydock.connect("second");
    expect(failure(await b.callTool({ name: "session_create", arguments: {} }))).toMatch(
      /already 1 sessions.*its creator continues it with session_resume/,
    );
    // Its id alone does not take it up; its secret does.
    expect(
      failure(await b.callTool({ name: "bash", arguments: { session_id: id, command: "cat note.txt" } })),
    ).toMatch(new RegExp(`session ${id} not found`));
    ok(
      await b.callTool({
        name: "session_resume",
        arguments: { session_id: id, session_secret: created.session_secret },
      }),
    );
    const read = ok(
      await b.callTool({ name: "bash", arguments: { session_id: id, command: "cat note.txt" } }),
    );
    expect(read.stdout).toBe("kept\n");
    ok(await b.callTool({ name: "session_destroy", arguments: { session_id: id } }));
    const next = ok(await b.callTool({ name: "session_create", arguments: {} })).session_id as string;
    // Kept sessions outlive the server: this test removes its own.
    ok(await b.callTool({ name: "session_destroy", arguments: { session_id: next } }));
  });
});

describe("a client's first session is its default", () => {
  it("session_create, then tools without session_id: one box, and the work is in the session the client was told of", async () => {
    using repo = tempRepo({ "a.txt": "a\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const created = ok(await drydock.client.callTool({ name: "session_create", arguments: {} }));
    const id = created.session_id as string;
    ok(await drydock.client.callTool({ name: "bash", arguments: { command: "echo made > b.txt" } }));
    const listed = ok(await drydock.client.callTool({ name: "session_list", arguments: {} }));
    const sessions = listed.sessions as Array<{ session_id: string }>;
    expect(sessions.map((s) => s.session_id)).toEqual([id]);
    const diff = ok(await drydock.client.callTool({ name: "git_diff", arguments: { session_id: id } }));
    expect(JSON.stringify(diff)).toContain("b.txt");
    // A second session is not the default: the first still is.
    const second = ok(await drydock.client.callTool({ name: "session_create", arguments: {} }));
    ok(await drydock.client.callTool({ name: "bash", arguments: { command: "echo again > c.txt" } }));
    const secondDiff = ok(
      await drydock.client.callTool({
        name: "git_diff",
        arguments: { session_id: second.session_id as string },
      }),
    );
    expect(JSON.stringify(secondDiff)).not.toContain("c.txt");
  });
});
