/**
 * The way out of a box is a diff. The box may rewrite its own .git (hooks, config with
 * core.fsmonitor, core.pager, filters), bend git's output with its own configuration, make links
 * out of the repository or a diff too large to review: none of it runs code on the host or writes
 * outside the repository, and a refused diff changes nothing. (The diff parser and the path rules
 * are tested without Docker in test/unit/workspace/diff-safety.test.ts.)
 */
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failure, inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";

/** Commands that leave a marker file on whatever machine runs them. */
function payloads(markers: string): { config: string; attributes: string; hook: string } {
  const touch = (what: string) => `touch ${markers}/${what}`;
  return {
    config: [
      "[core]",
      `\tfsmonitor = "${touch("fsmonitor")}; exit 1"`,
      `\tpager = ${touch("pager")}`,
      `\teditor = ${touch("editor")}`,
      `\tsshCommand = ${touch("ssh")}`,
      "\thooksPath = .git/hooks",
      "[diff]",
      `\texternal = ${touch("external-diff")}`,
      '[diff "evil"]',
      `\ttextconv = ${touch("textconv")}`,
      '[filter "evil"]',
      `\tclean = ${touch("filter-clean")}; cat`,
      `\tsmudge = ${touch("filter-smudge")}; cat`,
      "",
    ].join("\n"),
    attributes: "* filter=evil diff=evil\n",
    hook: `#!/bin/sh\n${touch("hook-$(basename $0)")}\n`,
  };
}

const HOOKS = [
  "pre-commit",
  "post-commit",
  "post-checkout",
  "post-merge",
  "pre-applypatch",
  "post-applypatch",
  "applypatch-msg",
  "post-index-change",
  "reference-transaction",
  "pre-auto-gc",
  "fsmonitor-watchman",
];

describe("the diff out of a box", () => {
  let repo: TempRepo;
  let drydock: InMemoryDrydock;
  let markers: string;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n", "src/app.py": "x = 1\n" });
    markers = mkdtempSync(join(tmpdir(), "drydock-markers-"));
    chmodSync(markers, 0o777);
    drydock = await inMemoryDrydock({ repo: repo.path });
  });

  afterAll(async () => {
    await drydock?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
    rmSync(markers, { recursive: true, force: true });
  });

  const call = async (name: string, args: Record<string, unknown>) =>
    drydock.client.callTool({ name, arguments: args });
  const bash = async (sessionId: string, command: string) =>
    ok(await call("bash", { command, session_id: sessionId })).stdout as string;
  const newSession = async () => ok(await call("session_create", {})).session_id as string;
  const hostState = () => ({
    refs: git(repo.path, "for-each-ref", "--format=%(refname) %(objectname)"),
    status: git(repo.path, "status", "--porcelain", "--ignored"),
    config: readFileSync(join(repo.path, ".git", "config"), "utf8"),
    hooks: readdirSync(join(repo.path, ".git", "hooks")).sort(),
  });

  it("a box that rewrites its .git (hooks, fsmonitor, pager, filters) runs nothing on the host through diff or apply", async () => {
    const id = await newSession();
    const p = payloads(markers);
    await bash(
      id,
      [
        `cat >> .git/config <<'EOF'\n${p.config}EOF`,
        `cp .git/config ~/.gitconfig`,
        `printf '%s' '${p.attributes}' > .git/info/attributes`,
        ...HOOKS.map((h) => `printf '%s' '${p.hook}' > .git/hooks/${h} && chmod +x .git/hooks/${h}`),
        // Changes the diff carries: an edit, a new file, and attributes that name the evil filter.
        "echo 'x = 2' > src/app.py && echo new > added.txt && printf '%s' '* filter=evil diff=evil\n' > .gitattributes",
        // The agent's own git use in the box fires its hooks there, not on the host.
        "git add -A >/dev/null 2>&1; git commit -qm box >/dev/null 2>&1; true",
      ].join("\n"),
    );
    const diff = ok(await call("session_diff", { session_id: id }));
    expect(diff.diff).toContain("+x = 2");
    const branch = ok(
      await call("session_apply", { session_id: id, mode: "branch", branch: "drydock/dot-git" }),
    );
    expect(branch.files).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "src/app.py" }),
        expect.objectContaining({ path: ".gitattributes" }),
      ]),
    );
    const before = hostState();
    const worktree = ok(await call("session_apply", { session_id: id, mode: "worktree" }));
    expect(worktree.mode).toBe("worktree");
    expect(readFileSync(join(repo.path, "src/app.py"), "utf8")).toBe("x = 2\n");
    // Not one marker on the host, and the host repository's own .git is as it was.
    expect(readdirSync(markers)).toEqual([]);
    expect(hostState().config).toBe(before.config);
    expect(hostState().hooks).toEqual(before.hooks);
    expect(git(repo.path, "show", "drydock/dot-git:src/app.py")).toBe("x = 2\n");
    git(repo.path, "checkout", "-q", "--", ".");
    git(repo.path, "clean", "-qfd");

    // A filter process that breaks the box's own git stops the diff there, with git's reason.
    await bash(
      id,
      // required: git fails on a filter that does not start, instead of passing the file through
      // (which git may do for an optional one, depending on when the process dies).
      `git config filter.evil.process '${`touch ${markers}/filter-process`}' && git config filter.evil.required true && echo 'x = 9' > src/app.py`,
    );
    expect(failure(await call("session_diff", { session_id: id }))).toMatch(
      /taking the diff out of the box failed .*filter-process/s,
    );
    expect(failure(await call("session_apply", { session_id: id, branch: "drydock/never" }))).toMatch(
      /filter/,
    );
    expect(git(repo.path, "branch", "--list", "drydock/never")).toBe("");
    expect(readdirSync(markers)).toEqual([]);

    // The payloads are live: in a directory holding that .git, host git would have run them.
    const control = mkdtempSync(join(tmpdir(), "drydock-control-"));
    try {
      git(control, "init", "-q");
      writeFileSync(
        join(control, ".git", "config"),
        readFileSync(join(control, ".git", "config"), "utf8") + p.config,
      );
      writeFileSync(join(control, ".git", "info", "attributes"), p.attributes);
      writeFileSync(join(control, "f"), "x\n");
      git(control, "add", "f");
      expect(readdirSync(markers).sort()).toEqual(expect.arrayContaining(["filter-clean", "fsmonitor"]));
    } finally {
      rmSync(control, { recursive: true, force: true });
      for (const m of readdirSync(markers)) rmSync(join(markers, m));
    }
  });

  it("links out of the repository, writes through them and nested repositories are refused before anything is applied", async () => {
    const attempts: Array<[string, string, RegExp]> = [
      ["a symlink to /etc", "ln -s /etc outside", /symlink "outside"/],
      [
        "a symlink to a sibling directory",
        `ln -s ../$(basename ${repo.path})-evil sibling`,
        /symlink "sibling"/,
      ],
      [
        "a symlink to a directory inside",
        "mkdir real && echo x > real/f && ln -s real alias",
        /symlink "alias"/,
      ],
      [
        "a nested repository",
        "mkdir sub && git -C sub init -q && echo y > sub/y && git -C sub add y && git -C sub -c user.name=a -c user.email=a@a commit -qm y",
        /submodule|gitlink/,
      ],
    ];
    for (const [what, command, refused] of attempts) {
      const id = await newSession();
      await bash(id, `${command} && echo 'x = 3' > src/app.py`);
      const before = hostState();
      for (const mode of ["branch", "worktree"]) {
        const message = failure(await call("session_apply", { session_id: id, mode }));
        expect(message, `${what} (${mode})`).toMatch(refused);
      }
      expect(hostState(), what).toEqual(before);
      expect(readFileSync(join(repo.path, "src/app.py"), "utf8")).toBe("x = 1\n");
      ok(await call("session_destroy", { session_id: id }));
    }
    expect(existsSync(join(repo.path, "outside"))).toBe(false);
  });

  it("a diff too large to review is refused with a clear error and nothing applied", async () => {
    const id = await newSession();
    await bash(id, "head -c 24000000 /dev/urandom | base64 > big.txt && echo 'x = 4' > src/app.py");
    const before = hostState();
    const message = failure(await call("session_apply", { session_id: id }));
    expect(message).toMatch(/the diff is larger than 20971520 bytes; remove generated or large files/);
    expect(hostState()).toEqual(before);
  });

  it("the box's own git configuration cannot bend the diff's format", async () => {
    const id = await newSession();
    await bash(
      id,
      [
        "git config --global diff.noprefix true",
        "git config --global diff.mnemonicPrefix true",
        "git config --global color.ui always",
        "git config --global core.quotePath false",
        "git config --global diff.renames copies",
        "git config --global diff.suppressBlankEmpty true",
        "git config --global diff.indentHeuristic false",
        "git config --global core.autocrlf true",
        "git config diff.orderFile /dev/null",
        "printf 'x = 5\\n\\nspaced\\n' > src/app.py && git mv README.md READ\\ ME.md && echo é > 'naïve.txt'",
      ].join(" && "),
    );
    const applied = ok(await call("session_apply", { session_id: id, branch: "drydock/box-config" }));
    expect((applied.files as Array<{ path: string }>).map((f) => f.path).sort()).toEqual(
      ["READ ME.md", "naïve.txt", "src/app.py"].sort(),
    );
    expect(git(repo.path, "show", "drydock/box-config:src/app.py")).toBe("x = 5\n\nspaced\n");
    expect(git(repo.path, "show", "drydock/box-config:READ ME.md")).toBe("hello\n");
    expect(git(repo.path, "show", "drydock/box-config:naïve.txt")).toBe("é\n");
  });
});
