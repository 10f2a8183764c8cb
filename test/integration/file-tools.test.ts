import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/session.js";
import type { SessionAccess } from "../../src/tools/session-access.js";
import type { AnyToolDefinition, ToolContext, ToolServices } from "../../src/tools/tool.js";
import { fileEditorTool, strReplaceBasedEditTool } from "../../src/tools/file-editor-tools.js";
import { listDir, readFile, readFiles, statPath, writeFile } from "../../src/tools/box-files.js";
import { codeSearchTool } from "../../src/tools/code-search-tool.js";
import { GIT_DIFF_MAX_BYTES, gitDiffTool } from "../../src/tools/git-diff-tool.js";
import { jsonEditorTool } from "../../src/tools/json-editor-tool.js";
import { sequentialThinkingTool } from "../../src/tools/thinking-tool.js";
import { workspaceTools } from "../../src/tools/workspace-tools.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

function contextFor(session: Session): ToolContext {
  const sessions: SessionAccess = {
    resolve: async () => session,
    create: async () => session,
    resume: async () => session,
    list: () => [session],
    fork: async () => [],
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

  it("keeps a file whole when a write is cancelled", async () => {
    await box.sh("printf 'precious\\n' > keep.txt");
    const cancelled = AbortSignal.abort();
    await expect(
      writeFile(box.session.box, "keep.txt", "x".repeat(1_000_000), { signal: cancelled }),
    ).rejects.toThrow(/cancelled/);
    // The program in the box outlives the cancelled call; give it time to finish.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await box.sh("cat keep.txt; ls -a | grep -c drydock-write || true")).toBe("precious\n0\n");
  });

  it("reads several files in one exec, leaving out what it may not read", async () => {
    await box.sh("ln -sf /etc/passwd /workspace/link");
    const files = await readFiles(box.session.box, ["src/app.py", "README.md", "link", "absent", "src"], {
      maxBytes: 10,
    });
    expect([...files.keys()]).toEqual(["/workspace/src/app.py", "/workspace/README.md"]);
    expect(files.get("/workspace/src/app.py")?.toString()).toBe(SOURCE.slice(0, 10));
    expect(files.get("/workspace/README.md")?.toString()).toBe("hi\n");
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
    await box.sh("ln -sfn /tmp/planted /workspace/dangling");
    await expect(writeFile(b, "dangling", "x", { createDirs: true })).rejects.toThrow(
      /to \/tmp\/planted, outside/,
    );
    expect(await box.sh("test -e /tmp/planted && echo written || echo refused")).toBe("refused\n");
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

  it("views and edits a Latin-1 file, keeping it Latin-1 byte for byte", async () => {
    // "café crème\n" and "© 2024\n" in ISO-8859-1: é, è and © are single bytes.
    await box.sh("printf 'caf\\351 cr\\350me\\n\\251 2024\\n' > menu.txt");
    const view = await edit({ operation: "view", path: "menu.txt" });
    expect(view).toMatchObject({ encoding: "latin1", total_lines: 2 });
    expect(view.output).toBe("     1\tcafé crème\n     2\t© 2024");
    const edited = await edit({
      operation: "replace",
      path: "menu.txt",
      old_string: "café",
      new_string: "thé à",
    });
    expect(edited.encoding).toBe("latin1");
    const hex = () => box.sh("od -An -tx1 menu.txt | tr -d ' \\n'");
    expect(await hex()).toBe("7468e920e0206372e86d650aa920323032340a");
    await expect(
      edit({ operation: "replace", path: "menu.txt", old_string: "2024", new_string: "5 €" }),
    ).rejects.toThrow(
      /^new_string: has "€" \(U\+20AC\), which \/workspace\/menu\.txt cannot hold: it is Latin-1/,
    );
    await edit({ operation: "undo", path: "menu.txt" });
    expect(await hex()).toBe("636166e9206372e86d650aa920323032340a");
    await box.sh("rm menu.txt");
  });

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

  it("refuses to create a path that ends with a slash, instead of a file named like the directory", async () => {
    await expect(edit({ operation: "create", path: "notes/", content: "x\n" })).rejects.toThrow(
      /path: "notes\/" ends with a slash, so it names a directory/,
    );
    expect(await box.sh("test -e notes && echo there || echo none")).toBe("none\n");
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
    const errorOf = (args: Record<string, unknown>) =>
      edit(args).then(
        () => "",
        (error: Error) => error.message,
      );
    // Every name in a message is this tool's: old_str, not file_editor's old_string.
    const twice = await errorOf({ command: "str_replace", path: "main.go", old_str: "main", new_str: "x" });
    expect(twice).toMatch(/^old_str: matches 2 times .*Add surrounding lines to old_str so it is unique$/);
    const none = await errorOf({ command: "str_replace", path: "main.go", old_str: "1\tmain", new_str: "x" });
    expect(none).toMatch(/^old_str: matches 0 times .*old_str seems to start with line numbers/);
    expect(await errorOf({ command: "str_replace", path: "main.go", old_str: "", new_str: "x" })).toMatch(
      /To add lines use insert; to write a whole file use create$/,
    );
    expect(await errorOf({ command: "str_replace", path: "main.go", old_str: "x", new_str: "x" })).toBe(
      "new_str: is the same as old_str, so nothing would change",
    );
    expect(await errorOf({ command: "create", path: "main.go", file_text: "x" })).toMatch(
      /edit it with str_replace or insert, or pass overwrite: true/,
    );
    expect(await errorOf({ command: "str_replace", path: "nope.go", old_str: "a", new_str: "b" })).toMatch(
      /create it with the create command/,
    );
    expect(await errorOf({ command: "insert", path: "main.go", insert_line: 9, new_str: "x" })).toMatch(
      /^insert_line: 9 is out of range/,
    );
    expect(await errorOf({ command: "insert", path: "main.go", insert_line: 1, new_str: "" })).toMatch(
      /^new_str: is empty/,
    );
    expect(await errorOf({ command: "str_replace", path: "main.go", new_str: "x" })).toBe(
      "old_str: is required for the str_replace command",
    );
    for (const message of [twice, none]) expect(message).not.toMatch(/old_string|new_string|line_number/);
  });
});

const PACKAGE_JSON =
  '{\n    "name": "demo",\n    "scripts": {\n        "test": "vitest"\n    },\n    "keywords": ["a"]\n}\n';

describe("json_editor", () => {
  const box = sharedSession({ "package.json": PACKAGE_JSON, "broken.json": '{\n  "a": 1,\n  "b": \n}\n' });
  const json = (args: Record<string, unknown>) => box.call(jsonEditorTool, args);

  it("views, sets, adds and removes, keeping the file's indentation", async () => {
    const view = await json({ operation: "view", file_path: "package.json", json_path: "$.scripts" });
    expect(view.output).toBe('{\n  "test": "vitest"\n}');
    expect(view.matches).toEqual([{ path: "$['scripts']", value: { test: "vitest" } }]);

    await json({
      operation: "set",
      file_path: "/workspace/package.json",
      json_path: "$.name",
      value: "renamed",
    });
    await json({ operation: "add", file_path: "package.json", json_path: "$.scripts.build", value: "tsc" });
    const added = await json({
      operation: "add",
      file_path: "package.json",
      json_path: "$.keywords",
      value: "b",
    });
    expect(added.changed_paths).toEqual(["$['keywords'][1]"]);
    const removed = await json({
      operation: "remove",
      file_path: "package.json",
      json_path: "$.scripts.test",
    });
    expect(removed.output).toMatch(/^Removed 1 value/);
    expect(await box.sh("cat package.json")).toBe(
      '{\n    "name": "renamed",\n    "scripts": {\n        "build": "tsc"\n    },\n    "keywords": ["a", "b"]\n}\n',
    );
  });

  it("changes only the edited values: three values, a three-line diff, comments kept", async () => {
    const row = (name: string) => `  "${name}": { "version": "1.0.0", "dev": false }, // ${name} stays`;
    await box.sh(
      `printf '%s\\n' '{' '${row("a")}' '${row("b")}' '${row("c")}' '  "z": 0' '}' > deps.json && git add deps.json && git commit -qm deps`,
    );
    const set = await json({
      operation: "set",
      file_path: "deps.json",
      json_path: "$..version",
      value: "2.0.0",
    });
    expect(set.changed_paths).toHaveLength(3);
    expect(await box.sh("git diff --numstat -- deps.json")).toBe("3\t3\tdeps.json\n");
    expect(await box.sh("grep -c 'stays' deps.json")).toBe("3\n");
  });

  it("leaves the file as it was on invalid JSON, a path matching nothing or a missing value", async () => {
    const before = await box.sh("cat package.json broken.json | sha256sum");
    await expect(
      json({ operation: "set", file_path: "broken.json", json_path: "$.a", value: 2 }),
    ).rejects.toThrow(/not valid JSON at line 4/);
    await expect(json({ operation: "view", file_path: "broken.json", json_path: "$" })).rejects.toThrow(
      /not valid JSON/,
    );
    await expect(
      json({ operation: "remove", file_path: "package.json", json_path: "$.nope.deeper" }),
    ).rejects.toThrow(/json_path: \$\.nope\.deeper matches nothing/);
    await expect(json({ operation: "set", file_path: "package.json", json_path: "$.name" })).rejects.toThrow(
      /value: is required/,
    );
    await expect(json({ operation: "view", file_path: "package.json" })).rejects.toThrow(
      /json_path: is required/,
    );
    await expect(json({ operation: "view", file_path: "../../etc/passwd", json_path: "$" })).rejects.toThrow(
      /outside \/workspace/,
    );
    await expect(json({ operation: "view", file_path: "absent.json", json_path: "$" })).rejects.toThrow(
      /does not exist/,
    );
    expect(await box.sh("cat package.json broken.json | sha256sum")).toBe(before);
  });
});

const TS_SOURCE = `export class Greeter {
  greet(name: string): string {
    return "hi " + name;
  }
}

export function helper(x: number): number {
  return x * 2;
}

export const arrow = (y: number) => y + 1;
`;
const PY_SOURCE =
  "class Store:\n    def save(self, item):\n        return item\n\n\ndef helper():\n    pass\n";

describe("code_search", () => {
  const box = sharedSession({
    "src/greeter.ts": TS_SOURCE,
    "lib/store.py": PY_SOURCE,
    "node_modules/dep/index.js": "function helper() {}\n",
  });
  const search = (args: Record<string, unknown>) => box.call(codeSearchTool, args);

  it("finds functions, classes and methods across languages, with bodies when asked", async () => {
    const functions = await search({ command: "search_function", identifier: "helper" });
    expect(functions.total).toBe(2);
    expect((functions.matches as { path: string; line: number }[]).map((m) => `${m.path}:${m.line}`)).toEqual(
      ["/workspace/lib/store.py:6", "/workspace/src/greeter.ts:7"],
    );
    const arrow = await search({ command: "search_function", identifier: "arrow", print_body: true });
    expect(arrow.matches).toMatchObject([{ line: 11, body: "export const arrow = (y: number) => y + 1;" }]);

    const classes = await search({ command: "search_class", identifier: "Greeter", print_body: true });
    expect(classes.matches).toMatchObject([{ path: "/workspace/src/greeter.ts", line: 1, kind: "class" }]);
    expect((classes.matches as { body: string }[])[0]?.body).toBe(
      TS_SOURCE.split("\n").slice(0, 5).join("\n"),
    );

    const method = await search({
      command: "search_class_method",
      identifier: "Store.save",
      print_body: true,
    });
    expect(method.matches).toMatchObject([{ path: "/workspace/lib/store.py", line: 2, scope: "Store" }]);
    expect(method.output).toContain("    def save(self, item):\n        return item");

    const scoped = await search({ command: "search_function", identifier: "helper", path: "lib" });
    expect(scoped.total).toBe(1);
  });

  it("reads Go and C definitions and caps the number of results", async () => {
    await box.sh(
      "printf 'package main\\n\\nfunc Serve(port int) error {\\n\\treturn nil\\n}\\n' > server.go && " +
        "printf 'int add(int a, int b) {\\n  return a + b;\\n}\\n' > math.c && " +
        "mkdir -p many && for i in $(seq 1 60); do printf 'def dup():\\n    pass\\n' > many/m$i.py; done",
    );
    const go = await search({ command: "search_function", identifier: "Serve", print_body: true });
    expect(go.matches).toMatchObject([{ path: "/workspace/server.go", line: 3, language: "Go" }]);
    expect((go.matches as { body: string }[])[0]?.body).toBe("func Serve(port int) error {\n\treturn nil\n}");
    const c = await search({ command: "search_function", identifier: "add" });
    expect(c.matches).toMatchObject([{ path: "/workspace/math.c", line: 1, language: "C" }]);
    const many = await search({ command: "search_function", identifier: "dup", print_body: true });
    expect(many.total).toBe(60);
    expect((many.matches as unknown[]).length).toBe(50);
    expect((many.matches as { body?: string }[]).filter((m) => m.body !== undefined).length).toBe(20);
    expect(many.output).toMatch(/^60 definitions for dup \(search_function\), first 50 shown:/);
  });

  it("explains a miss and refuses bad input", async () => {
    const miss = await search({ command: "search_function", identifier: "greet" });
    expect(miss).toMatchObject({ total: 0, matches: [] });
    expect(miss.hint).toMatch(/method.*search_class_method/);
    await expect(search({ command: "search_function", identifier: "two words" })).rejects.toThrow(
      /^identifier:/,
    );
    await expect(search({ command: "search_everything", identifier: "x" })).rejects.toThrow(/^command:/);
    await expect(search({ command: "search_function" })).rejects.toThrow(/^identifier: is required/);
    await expect(search({ command: "search_function", identifier: "x", path: "/etc" })).rejects.toThrow(
      /outside \/workspace/,
    );
    await box.sh("ln -sfn /usr /workspace/usr-link");
    await expect(
      search({ command: "search_function", identifier: "main", path: "usr-link" }),
    ).rejects.toThrow(/symlink\) to \/usr/);
    await expect(search({ command: "search_function", identifier: "x", path: "nowhere" })).rejects.toThrow(
      /does not exist/,
    );
  });
});

describe("git_diff", () => {
  const box = sharedSession({ "a.txt": "one\n", "dir/b.txt": "two\n" });
  const diff = (args: Record<string, unknown>) => box.call(gitDiffTool, args);

  it("shows uncommitted changes with untracked files, leaving the agent's index alone", async () => {
    expect(await diff({})).toMatchObject({ diff: "", summary: "no changes", files_changed: 0 });
    await box.sh("echo more >> a.txt && echo new > dir/new.txt && git add a.txt");
    const all = await diff({});
    expect(all).toMatchObject({ files_changed: 2, insertions: 2, deletions: 0, truncated: false });
    expect(all.diff).toContain("+++ b/a.txt");
    expect(all.diff).toContain("+++ b/dir/new.txt");
    expect(await box.sh("git diff --cached --name-only")).toBe("a.txt\n");
    const scoped = await diff({ path: "dir" });
    expect(scoped.files_changed).toBe(1);
    expect(scoped.diff).toContain("dir/new.txt");
  });

  it("diffs against a base commit and refuses what is not a commit", async () => {
    const base = (await box.sh("git rev-parse HEAD")).trim();
    await box.sh("git add -A && git -c user.name=t -c user.email=t@t commit -qm step && echo x > c.txt");
    const since = await diff({ base_commit: base });
    expect(since.base).toBe(base);
    expect(since.files_changed).toBe(3);
    expect((await diff({})).files_changed).toBe(1);
    await expect(diff({ base_commit: "--output=/workspace/x" })).rejects.toThrow(
      /^base_commit: .* not a commit-ish/,
    );
    await expect(diff({ base_commit: "no-such-branch" })).rejects.toThrow(
      /^base_commit: no-such-branch is not a commit/,
    );
    await expect(diff({ path: "../../etc" })).rejects.toThrow(/outside \/workspace/);
    expect(await box.sh("test -e /workspace/x || echo absent")).toBe("absent\n");
  });

  it("cuts a huge diff and says so", async () => {
    await box.sh("seq 1 200000 > huge.txt");
    const cut = await diff({ path: "huge.txt" });
    expect(cut.truncated).toBe(true);
    expect(cut.total_bytes as number).toBeGreaterThan(GIT_DIFF_MAX_BYTES);
    expect(cut.diff).toMatch(/\[diff cut at 262144 of \d+ bytes; pass path/);
  });

  it("follows edits, new files and deletions, and leaves the agent's index byte for byte", async () => {
    await box.sh("rm -f huge.txt && git add -A && git -c user.name=t -c user.email=t@t commit -qm clean");
    await box.sh(
      "echo edited >> a.txt && echo fresh > fresh.txt && rm dir/b.txt && git status -s >/dev/null",
    );
    const index = () => box.sh("sha256sum .git/index && git ls-files -s -v --debug | sha256sum");
    const before = await index();
    const changed = await diff({});
    expect(changed).toMatchObject({ files_changed: 3, insertions: 2, deletions: 1 });
    expect(changed.diff).toContain("+edited");
    expect(changed.diff).toContain("new file mode 100644");
    expect(changed.diff).toContain("deleted file mode 100644");
    // A deleted file, and a file under a directory that is gone, can still be named.
    expect(await diff({ path: "dir/b.txt" })).toMatchObject({ files_changed: 1, deletions: 1 });
    expect(await diff({ path: "gone/deeper/x.txt" })).toMatchObject({ diff: "", files_changed: 0 });
    expect(await index()).toBe(before);
    await box.sh("git checkout -q -- a.txt dir/b.txt && rm fresh.txt && git status -s >/dev/null");
    const restored = await index();
    expect(await diff({})).toMatchObject({ diff: "", files_changed: 0 });
    expect(await index()).toBe(restored);
  });
});

describe("sequential_thinking", () => {
  const box = sharedSession({ "README.md": "x\n" });
  const think = (args: Record<string, unknown>) => box.call(sequentialThinkingTool, args);

  it("records thoughts, revisions and branches per session and refuses bad steps", async () => {
    const first = await think({
      thought: "Read the failing test",
      thought_number: 1,
      total_thoughts: 3,
      next_thought_needed: true,
    });
    expect(first).toMatchObject({
      thoughtNumber: 1,
      totalThoughts: 3,
      thoughtHistoryLength: 1,
      branches: [],
    });
    await think({ thought: "Try a fix", thought_number: 2, total_thoughts: 3, next_thought_needed: true });
    await think({
      thought: "Actually the test is wrong",
      thought_number: 3,
      total_thoughts: 4,
      next_thought_needed: true,
      is_revision: true,
      revises_thought: 1,
    });
    const branch = await think({
      thought: "Other approach",
      thought_number: 4,
      total_thoughts: 4,
      next_thought_needed: false,
      branch_from_thought: 2,
      branch_id: "alt",
    });
    expect(branch).toMatchObject({ branches: ["alt"], thoughtHistoryLength: 4, nextThoughtNeeded: false });
    expect(branch.message).toMatch(/complete/);
    await expect(
      think({
        thought: "x",
        thought_number: 5,
        total_thoughts: 5,
        next_thought_needed: true,
        is_revision: true,
      }),
    ).rejects.toThrow(/^revises_thought: is required/);
    // next_thought_needed may be left out: the last planned thought ends the thinking.
    expect(await think({ thought: "x", thought_number: 5, total_thoughts: 5 })).toMatchObject({
      nextThoughtNeeded: false,
    });
    await expect(
      think({ thought: "x", thought_number: "5", total_thoughts: 5, next_thought_needed: true }),
    ).rejects.toThrow(/^thought_number:/);
  });
});

describe("workspaceTools", () => {
  it("lists every workspace tool once, each with a description and both schemas", () => {
    expect(workspaceTools.map((t) => t.name)).toEqual([
      "file_editor",
      "str_replace_based_edit_tool",
      "json_editor",
      "code_search",
      "git_diff",
      "sequential_thinking",
    ]);
    for (const tool of workspaceTools) {
      expect(tool.description.length).toBeGreaterThan(200);
      expect(Object.keys(tool.outputSchema).length).toBeGreaterThan(0);
      expect(tool.inputSchema).toHaveProperty("session_id");
    }
  });
});
