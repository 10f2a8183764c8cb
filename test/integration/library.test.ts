/**
 * The library API against the real engine, the same scenario both ways: in-process, and against
 * a `drydock serve --http` the test starts. Each test measures only the boxes it made (by label).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import {
  Drydock,
  InvalidArgumentError,
  NotFoundError,
  PathOutsideWorkspaceError,
  SessionNotFoundError,
  UnsafeDiffError,
  type Sandbox,
} from "../../src/index.js";
import { spawnHttpServer, stopServer, type SpawnedHttpServer } from "../helpers/http-server.js";
import { git, symlink, tempRepo, type TempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine } from "../helpers/sessions.js";

const token = "library-test-token";

async function boxesOf(sessionId: string): Promise<number> {
  return (await (await testEngine()).listBoxes(LABEL_SESSION, sessionId)).length;
}

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; field?: string }> {
  return promise.then(
    () => expect.fail("expected a rejection"),
    (error: unknown) => error as Error,
  );
}

describe.each(["in-process", "remote"] as const)("library API, %s", (flavour) => {
  let repo: TempRepo;
  /** Holds an untracked .gitignore hiding a .env; the server serves it too (--allow-repo). */
  let ignoreRepo: TempRepo;
  let state: string;
  let server: SpawnedHttpServer | undefined;
  let drydock: Drydock;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n", "src/app.py": "print('hi')\n" });
    symlink(repo, "/etc", "etc-link");
    repo.commit("a link out");
    ignoreRepo = tempRepo({ "README.md": "hello\n" });
    writeFileSync(join(ignoreRepo.path, ".gitignore"), ".env\n");
    writeFileSync(join(ignoreRepo.path, ".env"), "API_KEY=secret\n");
    state = mkdtempSync(join(tmpdir(), "drydock-library-state-"));
    if (flavour === "remote") {
      server = await spawnHttpServer({
        repo: repo.path,
        env: { ...process.env, DRYDOCK_TOKEN: token, DRYDOCK_STATE_DIR: state },
        args: ["--allow-repo", ignoreRepo.path],
      });
      drydock = Drydock.remote({ url: server.url, token });
    } else {
      drydock = Drydock.local({ image: sandboxImage(), environment: false });
    }
  });

  afterAll(async () => {
    await drydock?.close();
    await stopServer(server?.child);
    repo?.[Symbol.dispose]();
    ignoreRepo?.[Symbol.dispose]();
    rmSync(state, { recursive: true, force: true });
  });

  it("creates a box, streams a command, writes and reads files, diffs, applies to a branch and closes", async () => {
    const box = await drydock.create({ repo: repo.path });
    try {
      expect(await boxesOf(box.id)).toBe(1);
      expect(box.info.repo).toBe(repo.path);
      // The secret that resumes a kept session is the remote creator's; in-process there is no server to resume on.
      if (flavour === "remote") expect(box.info.sessionSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      else expect(box.info.sessionSecret).toBeUndefined();

      // Lines arrive while the command still runs, not only with its result.
      const lines: Array<{ line: string; at: number }> = [];
      const run = await box.commands.run("echo first; sleep 2; echo second; echo oops >&2; exit 3", {
        onOutput: (line) => lines.push({ line, at: Date.now() }),
      });
      const ended = Date.now();
      expect(run).toMatchObject({
        exitCode: 3,
        timedOut: false,
        stdout: "first\nsecond\n",
        stderr: "oops\n",
      });
      // Both streams: in-process in arrival order, remote stdout then stderr (no merged copy is sent).
      expect(run.output.split("\n").sort()).toEqual(["", "first", "oops", "second"]);
      if (flavour === "remote") expect(run.output).toBe(run.stdout + run.stderr);
      expect(lines.map((l) => l.line)).toEqual(expect.arrayContaining(["first", "second", "oops"]));
      expect(ended - lines.find((l) => l.line === "first")!.at).toBeGreaterThan(1500);

      // Exact text back: CRLF, no final newline, non-ASCII; and a file bigger than one reply.
      const odd = "line one\r\nzwei – drei ✓\r\nno newline at the end";
      await box.files.write("notes/odd.txt", odd);
      expect(await box.files.read("/workspace/notes/odd.txt")).toBe(odd);
      const big = Array.from({ length: 8000 }, (_, i) => `row ${i} ${"x".repeat(30)}`).join("\n") + "\n";
      await box.files.write("big.txt", big);
      expect(await box.files.read("big.txt")).toBe(big);
      expect(await box.files.list("notes")).toEqual([{ path: "odd.txt", type: "file" }]);
      expect(await box.files.list(".", { depth: 2 })).toEqual(
        expect.arrayContaining([
          { path: "src", type: "directory" },
          { path: "src/app.py", type: "file" },
          { path: "etc-link", type: "symlink" },
        ]),
      );

      const { diff, stat, baseCommit } = await box.diff();
      expect(baseCommit).toBe(box.info.baseCommit);
      expect(diff).toContain("+++ b/notes/odd.txt");
      expect(stat).toMatch(/2 files changed/);

      const applied = await box.apply({ branch: `lib/${flavour}` });
      expect(applied).toMatchObject({ mode: "branch", branch: `lib/${flavour}`, stat: { filesChanged: 2 } });
      expect(git(repo.path, "show", `lib/${flavour}:notes/odd.txt`)).toBe(odd);
      expect(git(repo.path, "status", "--porcelain")).toBe("");

      // The branch exists now: the same error class and field both ways.
      const again = await rejection(box.apply({ branch: `lib/${flavour}` }));
      expect(again).toBeInstanceOf(InvalidArgumentError);
      expect(again.field).toBe("branch");
    } finally {
      await box.close();
    }
    expect(await boxesOf(box.id)).toBe(0);
    expect(await rejection(box.files.read("README.md"))).toBeInstanceOf(SessionNotFoundError);
  });

  it("raises the tools' errors with the same classes and codes", async () => {
    await using box = await drydock.create({ repo: repo.path });
    const outside = await rejection(box.files.read("../etc/passwd"));
    expect(outside).toBeInstanceOf(PathOutsideWorkspaceError);
    expect(outside.code).toBe("path_outside_workspace");
    // Found outside only once the box resolves the link.
    expect(await rejection(box.files.read("etc-link/passwd"))).toBeInstanceOf(PathOutsideWorkspaceError);
    expect(await rejection(box.files.list("etc-link"))).toBeInstanceOf(PathOutsideWorkspaceError);
    expect(await rejection(box.files.write("etc-link/x", "no"))).toBeInstanceOf(PathOutsideWorkspaceError);
    const missing = await rejection(box.files.read("nothing-here.txt"));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.code).toBe("not_found");
    const directory = await rejection(box.files.read("src"));
    expect(directory).toMatchObject({ code: "invalid_argument", field: "path" });
    const binary = await box.commands.run("printf 'a\\0b' > bin.dat");
    expect(binary.exitCode).toBe(0);
    expect(await rejection(box.files.read("bin.dat"))).toMatchObject({ code: "binary_file" });
    await box.commands.run("head -c 9000000 /dev/zero | tr '\\0' a > huge.txt");
    const started = Date.now();
    expect(await rejection(box.files.read("huge.txt"))).toMatchObject({ code: "limit_exceeded" });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("refuses ignore-rule changes in the working tree unless allowed, and warns of them on a branch", async () => {
    const own = ignoreRepo;
    await using box = await drydock.create({ repo: own.path });
    expect((await box.commands.run("rm .gitignore; echo more >> README.md")).exitCode).toBe(0);
    const refused = await rejection(box.apply({ worktree: true }));
    expect(refused).toBeInstanceOf(UnsafeDiffError);
    expect(refused.code).toBe("unsafe_diff");
    expect(existsSync(join(own.path, ".gitignore"))).toBe(true);
    // The .gitignore was never committed: the branch sits on the last commit, which lacks it.
    const branch = await box.apply({ branch: "lib/ignore" });
    expect(branch.warnings).toEqual([
      expect.stringMatching(/\.gitignore deleted/),
      expect.stringMatching(/sits on your last commit/),
    ]);
    const applied = await box.apply({ worktree: true, allowIgnoreChanges: true });
    expect(applied.warnings).toEqual([expect.stringMatching(/\.gitignore deleted/)]);
    expect(existsSync(join(own.path, ".gitignore"))).toBe(false);
  });

  it("stops a command past its time limit; the shell keeps the cwd from before it", async () => {
    await using box = await drydock.create({ repo: repo.path });
    await box.commands.run("cd src");
    const started = Date.now();
    const stopped = await box.commands.run("sleep 30", { timeoutMs: 1000 });
    expect(stopped).toMatchObject({ exitCode: null, timedOut: true });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await box.commands.run("pwd")).stdout).toBe("/workspace/src\n");
  });

  it("keeps as much of a command's output as it asks for, up to the server's limit", async () => {
    await using box = await drydock.create({ repo: repo.path });
    const command = "head -c 300000 /dev/zero | tr '\\0' a";
    const capped = await box.commands.run(command);
    expect(capped.truncated).toBe(true);
    expect(capped.stdout.length).toBeLessThan(110_000);
    const whole = await box.commands.run(command, { maxOutputBytes: 400_000 });
    expect(whole).toMatchObject({ exitCode: 0, truncated: false });
    expect(whole.stdout).toBe("a".repeat(300_000));
    expect(await rejection(box.commands.run("true", { maxOutputBytes: 10 }))).toMatchObject({
      code: "invalid_argument",
      field: "maxOutputBytes",
    });
    const over = await rejection(box.commands.run("true", { maxOutputBytes: 64 * 1024 * 1024 }));
    expect(over).toMatchObject({ code: "invalid_argument" });
    expect(over.message).toMatch(/over .*limit of 4194304 bytes per stream/);
  });

  it("gives up on a command through its signal: rejects with the reason and stops the command", async () => {
    await using box = await drydock.create({ repo: repo.path });
    const signal = AbortSignal.timeout(1000);
    const started = Date.now();
    const error = await rejection(box.commands.run("sleep 30; touch late", { signal }));
    expect(error).toBe(signal.reason);
    // The command was stopped: the next one runs at once, and the first never finished.
    const next = await box.commands.run("sleep 1; ls late || echo gone");
    expect(next.stdout).toBe("gone\n");
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("checkpoints, restores and forks a sandbox; forks close with the Drydock or on their own", async () => {
    await using box: Sandbox = await drydock.create({ repo: repo.path });
    await box.commands.run("echo saved > src/app.py && cd src && export LIB_AT=saved");
    const saved = await box.checkpoint("saved", { message: "the first try" });
    expect(saved).toMatchObject({
      name: "saved",
      message: "the first try",
      changedFiles: 1,
      cwd: "/workspace/src",
    });
    await box.commands.run("cd / && echo later > /workspace/src/app.py && export LIB_AT=later");
    expect(await box.restore("saved")).toMatchObject({
      name: "saved",
      changedFiles: 1,
      cwd: "/workspace/src",
    });
    expect((await box.commands.run("cat app.py; echo $LIB_AT")).stdout).toBe("saved\nsaved\n");
    expect((await box.checkpoints()).map((c) => c.name)).toEqual(["saved"]);

    const [one, two] = await box.fork(2);
    expect(one!.id).not.toBe(box.id);
    expect((await one!.commands.run("cat app.py; echo $LIB_AT; pwd")).stdout).toBe(
      "saved\nsaved\n/workspace/src\n",
    );
    await two!.files.write("src/app.py", "two\n");
    expect((await one!.diff()).diff).toBe((await box.diff()).diff);
    expect((await two!.diff()).diff).toContain("+two");
    expect(await boxesOf(two!.id)).toBe(1);
    await two!.close();
    expect(await boxesOf(two!.id)).toBe(0);
    await one!.close();
    await expect(box.restore("no such")).rejects.toThrow(/^name: "no such" is not a checkpoint name/);
  });

  it("removes the box when an await using block ends", async () => {
    let id: string;
    {
      await using box: Sandbox = await drydock.create({ repo: repo.path });
      id = box.id;
      expect(await boxesOf(id)).toBe(1);
    }
    expect(await boxesOf(id)).toBe(0);
  });

  if (flavour === "in-process") {
    it("tells stdout from stderr while streaming", async () => {
      await using box = await drydock.create({ repo: repo.path });
      const out: string[] = [];
      const err: string[] = [];
      await box.commands.run("echo to-out; echo to-err >&2", {
        onStdout: (l) => out.push(l),
        onStderr: (l) => err.push(l),
      });
      expect(out).toEqual(["to-out"]);
      expect(err).toEqual(["to-err"]);
    });
  } else {
    it("says the token is wrong when the server refuses it", async () => {
      const wrong = Drydock.remote({ url: server!.url, token: "not-the-token" });
      const error = await rejection(wrong.create({ repo: repo.path }));
      expect(error).toMatchObject({ code: "server_unreachable" });
      expect(error.message).toMatch(/token/);
      await wrong.close();
    });

    it("says a write too large for the server is too large, not that no server answers", async () => {
      await using box = await drydock.create({ repo: repo.path });
      const error = await rejection(box.files.write("big.txt", "z".repeat(5_000_000)));
      expect(error).toMatchObject({ code: "limit_exceeded" });
      expect(error.message).toMatch(/HTTP 413.*write a file larger than about 3 MiB in parts/);
      await box.files.write("small.txt", "still fine\n");
      expect(await box.files.read("small.txt")).toBe("still fine\n");
    });
  }
});

describe("library API, remote, when the server dies mid-call", () => {
  it("fails the call within seconds with ServerUnreachableError, not at the command's limit", async () => {
    using repo = tempRepo({ "README.md": "hello\n" });
    const state = mkdtempSync(join(tmpdir(), "drydock-library-dead-"));
    const server = await spawnHttpServer({
      repo: repo.path,
      env: { ...process.env, DRYDOCK_TOKEN: token, DRYDOCK_STATE_DIR: state },
    });
    const drydock = Drydock.remote({ url: server.url, token });
    let sessionId: string | undefined;
    try {
      const box = await drydock.create({ repo: repo.path });
      sessionId = box.id;
      const running = rejection(box.commands.run("sleep 300", { timeoutMs: 600_000 }));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const killed = Date.now();
      server.child.kill("SIGKILL");
      const error = await running;
      expect(error).toMatchObject({ code: "server_unreachable" });
      expect(error.message).toMatch(/stopped answering during the call|fetch failed|ECONNREFUSED|terminated/);
      expect(Date.now() - killed).toBeLessThan(30_000);
    } finally {
      await drydock.close().catch(() => undefined);
      // The server died with its box: the test removes what it made.
      if (sessionId) {
        const engine = await testEngine();
        for (const b of await engine.listBoxes(LABEL_SESSION, sessionId)) await engine.remove(b.id);
      }
      rmSync(state, { recursive: true, force: true });
    }
  });
});
