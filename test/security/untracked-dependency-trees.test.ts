/**
 * Untracked dependency trees (an installed `node_modules`, a virtualenv) stay on the host: a
 * session's box lacks them, keeps what only looks like one and every tracked file inside one, the
 * start says what was left out and how to include it, and nothing the diff carries back can
 * delete them or carry them into a branch. Runs under runc and gVisor.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { Drydock, InvalidArgumentError } from "../../src/index.js";
import type { Session } from "../../src/session/session.js";
import { spawnHttpServer, stopServer } from "../helpers/http-server.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";
import { withPrefilledPool } from "../helpers/prefilled-pool.js";
import { sandboxImage, testSession } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const PACKAGES = 2_000;

/** A repository as a newcomer leaves it after `npm install` and `python -m venv .venv`, nothing ignored. */
function installedRepo(): TempRepo {
  const repo = tempRepo({
    "README.md": "hello\n",
    // A file someone committed inside node_modules (a patched package): tracked, so always copied.
    "node_modules/patched/index.js": "tracked\n",
  });
  for (let i = 0; i < PACKAGES; i++)
    repo.write(`node_modules/pkg${i % 50}/f${i}.js`, `module.exports = ${i};\n`);
  repo.write(".venv/pyvenv.cfg", "home = /usr/bin\n");
  repo.write(".venv/lib/python3.12/site-packages/six.py", "# six\n");
  // Named like a dependency tree but without the tool's marker: a real directory, copied.
  repo.write("venv/README.md", "our venv tooling\n");
  repo.write("target/notes.md", "target audience\n");
  repo.write("src/app.ts", "export {};\n");
  // A link named like a tree is a link to git (one untracked path, nothing under it): it is copied
  // as a link, as before, and never followed to decide anything.
  mkdirSync(join(repo.path, "web"));
  symlinkSync("/etc", join(repo.path, "web", "node_modules"));
  return repo;
}

/** What of the repository the box has: each path, "yes" or "no". */
async function present(session: Session, paths: string[]): Promise<Record<string, string>> {
  const out = (
    await session.bash(
      `cd /workspace; for p in ${paths.map((p) => `'${p}'`).join(" ")}; do if [ -e "$p" ]; then echo yes; else echo no; fi; done`,
    )
  ).output;
  const answers = out.trim().split("\n");
  return Object.fromEntries(paths.map((p, i) => [p, answers[i] ?? "?"]));
}

const LEFT_OUT = ["node_modules/pkg0/f0.js", ".venv/pyvenv.cfg", ".venv/lib/python3.12/site-packages/six.py"];
const KEPT = [
  "node_modules/patched/index.js",
  "venv/README.md",
  "target/notes.md",
  "src/app.ts",
  "README.md",
];

function runCli(
  repo: string,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [cli, "run", "--repo", repo, "--image", inject("sandboxImage"), "--no-env", ...args],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

const filesUnder = (dir: string): number =>
  readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;

describe("untracked dependency trees", () => {
  const repos: TempRepo[] = [];
  const newRepo = () => {
    const repo = installedRepo();
    repos.push(repo);
    return repo;
  };
  afterEach(() => {
    for (const repo of repos.splice(0)) repo[Symbol.dispose]();
  });

  it("are left out of the box; a tracked file in one and a look-alike without its marker are copied", async () => {
    const repo = newRepo();
    await using session = await testSession(repo.path);
    const seen = await present(session, [...LEFT_OUT, ...KEPT]);
    for (const path of LEFT_OUT) expect(seen[path], path).toBe("no");
    for (const path of KEPT) expect(seen[path], path).toBe("yes");
    expect((await session.bash("readlink /workspace/web/node_modules")).output).toBe("/etc\n");
    // Nothing left out reads as a deletion.
    expect(await session.diff()).toBe("");
  });

  it("are left out of a repository with no commit yet, files added to its index kept", async () => {
    const repo = newRepo();
    rmSync(join(repo.path, ".git"), { recursive: true, force: true });
    git(repo.path, "init", "-q", "-b", "main");
    git(repo.path, "add", "README.md", "node_modules/patched/index.js");
    await using session = await testSession(repo.path);
    const seen = await present(session, [...LEFT_OUT, ...KEPT]);
    for (const path of LEFT_OUT) expect(seen[path], path).toBe("no");
    for (const path of KEPT) expect(seen[path], path).toBe("yes");
    expect(
      (await session.bash("cd /workspace && git status --porcelain --untracked-files=all")).output,
    ).not.toMatch(/node_modules\/pkg|\.venv/);
  });

  it("are copied with includeUntrackedDependencies", async () => {
    const repo = newRepo();
    await using session = await testSession(repo.path, { includeUntrackedDependencies: true });
    const seen = await present(session, [...LEFT_OUT, ...KEPT]);
    for (const path of [...LEFT_OUT, ...KEPT]) expect(seen[path], path).toBe("yes");
    expect((await session.bash("find /workspace/node_modules -type f | wc -l")).output).toBe(
      `${PACKAGES + 1}\n`,
    );
    expect(await session.diff()).toBe("");
  });

  it("are left out of a prefilled warm box too", async () => {
    const repo = newRepo();
    await withPrefilledPool(repo.path, async (manager) => {
      const session = await manager.create({ repo: repo.path, image: sandboxImage() });
      expect(session.warm).toBe(true);
      const seen = await present(session, [...LEFT_OUT, ...KEPT]);
      for (const path of LEFT_OUT) expect(seen[path], path).toBe("no");
      for (const path of KEPT) expect(seen[path], path).toBe("yes");
      expect(await session.diff()).toBe("");
    });
  });

  it("what the agent installs there stays out of the diff, and applying it deletes nothing on the host", async () => {
    const repo = newRepo();
    await using session = await testSession(repo.path);
    await session.bash(
      "cd /workspace && mkdir -p node_modules/fresh .venv/bin && echo installed > node_modules/fresh/i.js && echo py > .venv/bin/python && echo change >> README.md && echo edit > node_modules/patched/index.js",
    );
    const diff = await session.diff();
    expect(diff.match(/^diff --git .*$/gm)).toEqual([
      "diff --git a/README.md b/README.md",
      "diff --git a/node_modules/patched/index.js b/node_modules/patched/index.js",
    ]);
    // As a branch on what the user committed, and with their uncommitted work: neither holds the
    // untracked trees, and the working tree keeps them.
    const plain = await session.apply({ branch: "drydock/plain" });
    const withWork = await session.apply({ branch: "drydock/with-work", includeUncommitted: true });
    for (const branch of [plain.branch!, withWork.branch!]) {
      const tree = git(repo.path, "ls-tree", "-r", "--name-only", branch);
      expect(tree, branch).not.toMatch(/node_modules\/pkg|\.venv\//);
      expect(tree, branch).toContain("node_modules/patched/index.js");
    }
    expect(git(repo.path, "ls-tree", "-r", "--name-only", withWork.branch!)).toContain("src/app.ts");
    await session.apply({ mode: "worktree" });
    expect(filesUnder(join(repo.path, "node_modules"))).toBe(PACKAGES + 1);
    expect(existsSync(join(repo.path, ".venv", "pyvenv.cfg"))).toBe(true);
    expect(existsSync(join(repo.path, "node_modules", "fresh"))).toBe(false);
    expect(git(repo.path, "status", "--porcelain", "--", "README.md", "node_modules/patched")).toBe(
      " M README.md\n M node_modules/patched/index.js\n",
    );
  });

  it("an agent that drops the box's exclude lines and writes over a host's left-out file cannot change it", async () => {
    const repo = newRepo();
    await using session = await testSession(repo.path);
    await session.bash(
      "cd /workspace && : > .git/info/exclude && mkdir -p node_modules/pkg0 && echo 'module.exports = \"evil\";' > node_modules/pkg0/f0.js",
    );
    // The file is the agent's new file, in plain sight in the diff, not a change to the host's.
    expect(await session.diff()).toMatch(
      /^new file mode 100644\n.*\n--- \/dev\/null\n\+\+\+ b\/node_modules\/pkg0\/f0\.js$/m,
    );
    await expect(session.apply({ mode: "worktree" })).rejects.toMatchObject({ name: "ApplyConflictError" });
    expect(readFileSync(join(repo.path, "node_modules", "pkg0", "f0.js"), "utf8")).toBe(
      "module.exports = 0;\n",
    );
    expect(filesUnder(join(repo.path, "node_modules"))).toBe(PACKAGES + 1);
  });

  it("the start names what was left out with its size and the flag; the flag copies them in", async () => {
    const repo = newRepo();
    const ran = await runCli(repo.path, "--no-diff", "--", "ls -A node_modules .venv 2>&1 | head -3");
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toMatch(
      new RegExp(
        `node_modules/ \\(${PACKAGES.toLocaleString("en-US")} files, \\d+\\.\\d KiB\\), \\.venv/ \\(2 files, 0\\.0 KiB\\)`,
      ),
    );
    expect(ran.stderr).toContain("--include-untracked-dependencies");
    expect(ran.stdout).toContain("ls: cannot access '.venv'");
    expect(ran.stdout).toMatch(/^patched$/m);
    const included = await runCli(
      repo.path,
      "--include-untracked-dependencies",
      "--no-diff",
      "--",
      "find node_modules .venv -type f | wc -l",
    );
    expect(included.code, included.stderr).toBe(0);
    expect(included.stdout.trim()).toBe(String(PACKAGES + 1 + 2));
    expect(included.stderr).not.toContain("left out of the box");
  });
});

describe("untracked dependency trees, through the library and drydock serve", () => {
  const HAS = "test -e node_modules/pkg0/f0.js && echo has || echo lacks";

  it("the library leaves them out unless includeUntrackedDependencies", async () => {
    using repo = installedRepo();
    const drydock = Drydock.local({ image: sandboxImage(), environment: false });
    try {
      await using lacking = await drydock.create({ repo: repo.path });
      expect((await lacking.commands.run(HAS)).stdout).toBe("lacks\n");
      await using having = await drydock.create({ repo: repo.path, includeUntrackedDependencies: true });
      expect((await having.commands.run(HAS)).stdout).toBe("has\n");
      await expect(
        drydock.create({ repo: repo.path, includeUntrackedDependencies: "yes" as unknown as boolean }),
      ).rejects.toMatchObject({ field: "includeUntrackedDependencies" });
    } finally {
      await drydock.close();
    }
  });

  it("drydock serve leaves them out unless started with --include-untracked-dependencies, and says so on stderr", async () => {
    using repo = installedRepo();
    const state = mkdtempSync(join(tmpdir(), "drydock-trees-state-"));
    const env = { ...process.env, DRYDOCK_TOKEN: "trees-token", DRYDOCK_STATE_DIR: state };
    try {
      for (const [args, expected] of [
        [[], "lacks\n"],
        [["--include-untracked-dependencies"], "has\n"],
      ] as const) {
        const server = await spawnHttpServer({ repo: repo.path, env, args: [...args] });
        let stderr = "";
        server.child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
        const drydock = Drydock.remote({ url: server.url, token: "trees-token" });
        try {
          await using box = await drydock.create();
          expect((await box.commands.run(HAS)).stdout, args.join(" ")).toBe(expected);
          if (args.length === 0) {
            expect(stderr).toMatch(
              /node_modules\/ \(2,000 files, [\d.]+ KiB\).*--include-untracked-dependencies/,
            );
            // A remote sandbox cannot ask for them: the server decides.
            const refused = drydock.create({ includeUntrackedDependencies: true });
            await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
            await expect(refused).rejects.toThrow(/drydock serve --include-untracked-dependencies/);
          } else {
            expect(stderr).not.toContain("left out of the box");
          }
        } finally {
          await drydock.close();
          await stopServer(server.child);
        }
      }
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
