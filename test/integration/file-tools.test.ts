import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/session.js";
import type { SessionAccess } from "../../src/tools/session-access.js";
import type { AnyToolDefinition, ToolContext, ToolServices } from "../../src/tools/tool.js";
import { fileEditorTool, strReplaceBasedEditTool } from "../../src/tools/file-editor-tools.js";
import { listDir, readFile, statPath, writeFile } from "../../src/tools/box-files.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

function contextFor(session: Session): ToolContext {
  const sessions: SessionAccess = {
    resolve: async () => session,
    create: async () => session,
    list: () => [session],
    destroy: async () => undefined,
  };
  return {
    clientId: "test-client",
    signal: new AbortController().signal,
    progress: () => undefined,
    services: { sessions } as unknown as ToolServices,
  };
}

/** A shared session for one describe block, removed afterwards. */
function sharedSession(files: Record<string, string>) {
  const state: { repo?: TempRepo; session?: Session; ctx?: ToolContext } = {};
  beforeAll(async () => {
    state.repo = tempRepo(files);
    state.session = await testSession(state.repo.path);
    state.ctx = contextFor(state.session);
  });
  afterAll(async () => {
    await state.session?.destroy();
    state.repo?.[Symbol.dispose]();
  });
  return {
    get session(): Session {
      if (!state.session) throw new Error("session not started");
      return state.session;
    },
    call(tool: AnyToolDefinition, args: Record<string, unknown>): Promise<Record<string, unknown>> {
      if (!state.ctx) throw new Error("session not started");
      return tool.run(args, state.ctx) as Promise<Record<string, unknown>>;
    },
    async sh(command: string): Promise<string> {
      const r = await this.session.bash(command);
      if (r.exitCode !== 0) throw new Error(`${command} failed: ${r.output}`);
      return r.output;
    },
  };
}

const SOURCE = "def greet(name):\n    return f'hello {name}'\n\n\ndef main():\n    print(greet('x'))\n";

describe("box files", () => {
  const box = sharedSession({ "src/app.py": SOURCE, "README.md": "hi\n", ".hidden/x": "x\n" });

  it("reads, writes, stats and lists inside /workspace", async () => {
    const read = await readFile(box.session.box, "src/app.py");
    expect(read.data.toString()).toBe(SOURCE);
    expect(read).toMatchObject({ path: "/workspace/src/app.py", size: SOURCE.length, truncated: false });
    const capped = await readFile(box.session.box, "/workspace/src/app.py", { maxBytes: 5 });
    expect(capped).toMatchObject({ truncated: true, size: SOURCE.length });
    expect(capped.data.toString()).toBe("def g");

    expect(await writeFile(box.session.box, "new/dir/file.txt", "one\n", { createDirs: true })).toBe(
      "/workspace/new/dir/file.txt",
    );
    expect(await box.sh("cat new/dir/file.txt; stat -c %a new/dir/file.txt")).toBe("one\n644\n");
    await writeFile(box.session.box, "new/dir/file.txt", "", { mode: "755" });
    expect(await box.sh("wc -c < new/dir/file.txt; stat -c %a new/dir/file.txt")).toBe("0\n755\n");
    await expect(writeFile(box.session.box, "missing/file.txt", "x")).rejects.toThrow(/does not exist/);

    expect(await statPath(box.session.box, "src")).toMatchObject({
      kind: "directory",
      path: "/workspace/src",
    });
    expect(await statPath(box.session.box, "nope")).toMatchObject({ kind: "missing" });
    const listing = await listDir(box.session.box, "/workspace");
    const paths = listing.entries.map((e) => e.path).sort();
    expect(paths).toEqual(["README.md", "new", "new/dir", "src", "src/app.py"]);
  });

  it("refuses paths and symlinks that leave /workspace, directories and devices", async () => {
    await box.sh(
      "ln -sf /etc/passwd /workspace/link && ln -sfn /etc /workspace/etc-dir && mkfifo /workspace/fifo",
    );
    const b = box.session.box;
    await expect(readFile(b, "../../etc/passwd")).rejects.toThrow(/outside \/workspace/);
    await expect(readFile(b, "/etc/passwd")).rejects.toThrow(/outside \/workspace/);
    await expect(readFile(b, "link")).rejects.toThrow(/symlink\) to \/etc\/passwd, outside/);
    await expect(readFile(b, "etc-dir/passwd")).rejects.toThrow(/outside \/workspace/);
    await expect(writeFile(b, "link", "owned")).rejects.toThrow(/outside \/workspace/);
    await expect(statPath(b, "etc-dir")).rejects.toThrow(/outside \/workspace/);
    await expect(listDir(b, "etc-dir")).rejects.toThrow(/outside \/workspace/);
    await expect(readFile(b, "src")).rejects.toThrow(/is a directory/);
    await expect(readFile(b, "fifo")).rejects.toThrow(/not a regular file/);
    await expect(writeFile(b, "fifo", "x")).rejects.toThrow(/not a regular file/);
    await expect(readFile(b, "absent.txt")).rejects.toThrow(/does not exist/);
    expect(await box.sh("readlink link; ls /workspace/.drydock-write-* 2>/dev/null | wc -l")).toBe(
      "/etc/passwd\n0\n",
    );
  });
});

describe("file_editor", () => {
  const box = sharedSession({ "src/app.py": SOURCE, "docs/guide.md": "# Guide\n", ".git-ignored/x": "x\n" });
  const edit = (args: Record<string, unknown>) => box.call(fileEditorTool, args);

  it("views a file with numbered lines and a view_range", async () => {
    const all = await edit({ operation: "view", path: "src/app.py" });
    expect(all).toMatchObject({ path: "/workspace/src/app.py", kind: "file", total_lines: 6 });
    expect(all.output).toContain("     1\tdef greet(name):");
    const part = await edit({ operation: "view", path: "/workspace/src/app.py", view_range: [5, -1] });
    expect(part.output).toBe("     5\tdef main():\n     6\t    print(greet('x'))");
    await expect(edit({ operation: "view", path: "src/app.py", view_range: [7, 9] })).rejects.toThrow(
      /view_range: start 7 is out of range/,
    );
  });

  it("views a directory two levels deep without hidden entries", async () => {
    await box.sh("mkdir -p deep/a/b/c && touch deep/a/b/c/file deep/.secret");
    const view = await edit({ operation: "view", path: "/workspace" });
    expect(view.kind).toBe("directory");
    const out = String(view.output);
    expect(out).toContain("/workspace/src/app.py");
    expect(out).toContain("/workspace/deep/a/");
    expect(out).not.toContain("deep/a/b");
    expect(out).not.toContain(".git");
    expect(out).not.toContain(".secret");
  });

  it("creates, replaces, inserts and undoes each step", async () => {
    const created = await edit({ operation: "create", path: "pkg/new.py", content: "a = 1\nb = 2\n" });
    expect(created.output).toMatch(/Created \/workspace\/pkg\/new.py \(2 lines\)/);
    expect(created.output).toContain("     2\tb = 2");

    const replaced = await edit({
      operation: "replace",
      path: "pkg/new.py",
      old_string: "b = 2",
      new_string: "b = 3",
    });
    expect(replaced).toMatchObject({ first_line: 2, last_line: 2, undo_steps: 2 });
    expect(replaced.output).toContain("     2\tb = 3");

    const inserted = await edit({
      operation: "insert",
      path: "pkg/new.py",
      line_number: 0,
      content: "# header\n",
    });
    expect(inserted.output).toContain("     1\t# header");
    expect(await box.sh("cat pkg/new.py")).toBe("# header\na = 1\nb = 3\n");

    await edit({ operation: "undo", path: "pkg/new.py" });
    expect(await box.sh("cat pkg/new.py")).toBe("a = 1\nb = 3\n");
    await edit({ operation: "undo", path: "pkg/new.py" });
    expect(await box.sh("cat pkg/new.py")).toBe("a = 1\nb = 2\n");
    const removed = await edit({ operation: "undo", path: "pkg/new.py" });
    expect(removed.output).toMatch(/removed/);
    expect(await box.sh("test -e pkg/new.py && echo there || echo gone")).toBe("gone\n");
    await expect(edit({ operation: "undo", path: "src/app.py" })).rejects.toThrow(/nothing to undo/);
  });

  it("refuses to undo over changes made some other way", async () => {
    await edit({
      operation: "replace",
      path: "docs/guide.md",
      old_string: "# Guide",
      new_string: "# Guide v2",
    });
    await box.sh("echo 'by hand' >> docs/guide.md");
    await expect(edit({ operation: "undo", path: "docs/guide.md" })).rejects.toThrow(
      /changed .* by something other/,
    );
    expect(await box.sh("cat docs/guide.md")).toBe("# Guide v2\nby hand\n");
  });

  it("says how many matches a replace found and changes nothing", async () => {
    const before = await box.sh("cat src/app.py");
    await expect(
      edit({ operation: "replace", path: "src/app.py", old_string: "nothing like it", new_string: "x" }),
    ).rejects.toThrow(/old_string: matches 0 times/);
    await expect(
      edit({ operation: "replace", path: "src/app.py", old_string: "def ", new_string: "async def " }),
    ).rejects.toThrow(/old_string: matches 2 times .*lines 1, 5/);
    expect(await box.sh("cat src/app.py")).toBe(before);
  });

  it("refuses to create over an existing file unless overwrite is set", async () => {
    await expect(edit({ operation: "create", path: "src/app.py", content: "gone\n" })).rejects.toThrow(
      /already exists .*overwrite: true/,
    );
    expect(await box.sh("cat src/app.py")).toBe(SOURCE);
    await edit({ operation: "create", path: "src/app.py", content: "replaced\n", overwrite: true });
    expect(await box.sh("cat src/app.py")).toBe("replaced\n");
    await edit({ operation: "undo", path: "src/app.py" });
    expect(await box.sh("cat src/app.py")).toBe(SOURCE);
  });

  it("names missing and wrongly typed fields", async () => {
    await expect(edit({ operation: "replace", path: "src/app.py", new_string: "x" })).rejects.toThrow(
      /old_string: is required for the replace operation/,
    );
    await expect(edit({ operation: "insert", path: "src/app.py", content: "x" })).rejects.toThrow(
      /line_number: is required/,
    );
    await expect(edit({ operation: "create", path: "src/x.py" })).rejects.toThrow(/content: is required/);
    await expect(edit({ path: "src/app.py" })).rejects.toThrow(/operation: is required/);
    await expect(edit({ operation: "explode", path: "src/app.py" })).rejects.toThrow(
      /operation: Invalid option/,
    );
    await expect(
      edit({ operation: "insert", path: "src/app.py", content: "x", line_number: "2" }),
    ).rejects.toThrow(/line_number: Invalid input: expected number/);
    await expect(edit({ operation: "view", path: 42 })).rejects.toThrow(/path: Invalid input/);
    expect(await box.sh("cat src/app.py; test -e src/x.py || echo no-x")).toBe(`${SOURCE}no-x\n`);
  });

  it("refuses paths outside /workspace, also through a symlink made in the box", async () => {
    await box.sh("ln -sf /etc/passwd /workspace/link");
    for (const path of ["../../etc/passwd", "/etc/passwd", "link"]) {
      await expect(edit({ operation: "view", path })).rejects.toThrow(/outside \/workspace/);
      await expect(edit({ operation: "create", path, content: "x", overwrite: true })).rejects.toThrow(
        /outside \/workspace/,
      );
      await expect(
        edit({ operation: "replace", path, old_string: "root", new_string: "toor" }),
      ).rejects.toThrow(/outside \/workspace/);
    }
    expect(await box.sh("head -c 5 /etc/passwd; readlink /workspace/link")).toBe("root:/etc/passwd\n");
  });

  it("views a 50 MB file in parts and refuses to edit it", async () => {
    await box.sh("yes 'a line of text' | head -n 3500000 > big.txt && echo last >> big.txt");
    const first = await edit({ operation: "view", path: "big.txt" });
    expect(first).toMatchObject({ total_lines: 3_500_001, first_line: 1, last_line: 2000, truncated: true });
    expect(first.output).toMatch(/MB with 3500001 lines.*view_range \[2001, 4000\]/);
    expect(String(first.output).length).toBeLessThan(300 * 1024);
    const tail = await edit({ operation: "view", path: "big.txt", view_range: [3_500_000, -1] });
    expect(tail.output).toContain("3500000\ta line of text\n3500001\tlast");
    await expect(
      edit({ operation: "replace", path: "big.txt", old_string: "last", new_string: "x" }),
    ).rejects.toThrow(/MB, over the 8 MB this editor loads; view it in parts/);
  });
});

describe("str_replace_based_edit_tool", () => {
  const box = sharedSession({ "main.go": "package main\n\nfunc main() {}\n" });
  const edit = (args: Record<string, unknown>) => box.call(strReplaceBasedEditTool, args);

  it("runs every command with the text-editor parameter names", async () => {
    expect((await edit({ command: "view", path: "main.go" })).output).toContain("     3\tfunc main() {}");
    await edit({ command: "create", path: "util.go", file_text: "package main\n" });
    await edit({ command: "str_replace", path: "util.go", old_str: "package main", new_str: "package util" });
    await edit({ command: "insert", path: "util.go", insert_line: 1, new_str: "\nfunc Help() {}\n" });
    expect(await box.sh("cat util.go")).toBe("package util\n\nfunc Help() {}\n");
    await edit({ command: "undo_edit", path: "util.go" });
    expect(await box.sh("cat util.go")).toBe("package util\n");
  });

  it("names its own fields in errors", async () => {
    await expect(edit({ command: "str_replace", path: "main.go", new_str: "x" })).rejects.toThrow(
      /^old_str: is required/,
    );
    await expect(edit({ command: "insert", path: "main.go", insert_line: 1 })).rejects.toThrow(
      /^new_str: is required/,
    );
    await expect(edit({ command: "create", path: "x.go" })).rejects.toThrow(/^file_text: is required/);
    await expect(
      edit({ command: "str_replace", path: "main.go", old_str: "main", new_str: "x" }),
    ).rejects.toThrow(/^old_str: matches 2 times/);
  });
});
