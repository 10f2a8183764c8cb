import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AiderBridge, RepoFileAccess, type MemorySystem } from "../../../src/index.js";
import { fakeStdioServer, makeTempRepo, type TempRepo } from "./fixtures.js";

const repos: TempRepo[] = [];
const bridges: AiderBridge[] = [];
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((bridge) => bridge.close()));
  repos.splice(0).forEach((repo) => repo.dispose());
});

/** A repository with two source files, and beside it (outside) a secret and a symlink to it. */
function setup(options: { memory?: MemorySystem } = {}) {
  const repo = makeTempRepo({
    "src/app.ts": "export function startServer() { return listen(8080); }\n",
    "src/math/fibonacci.ts":
      "export function fibonacci(n: number): number { return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2); }\n",
    "README.md": "# demo\n",
  });
  repos.push(repo);
  mkdirSync(join(repo.base, "outside"));
  const secret = join(repo.base, "outside", "secret.txt");
  writeFileSync(secret, "fibonacci secret");
  symlinkSync(secret, join(repo.root, "src", "link-out.txt"));
  symlinkSync(join(repo.root, "src", "app.ts"), join(repo.root, "src", "link-in.ts"));
  const bridge = new AiderBridge({ server: fakeStdioServer("success"), repoPath: repo.root, ...options });
  bridges.push(bridge);
  return {
    repo,
    bridge,
    secret,
    app: join(repo.root, "src/app.ts"),
    fib: join(repo.root, "src/math/fibonacci.ts"),
  };
}

describe("AiderBridge file context", () => {
  it("starts empty", () => {
    const { bridge } = setup();
    expect(bridge.getFileContext()).toEqual({ file_paths: [], file_count: 0, context_source: null });
  });

  it("keeps existing files inside the repository, relative or absolute, as absolute paths", async () => {
    const { bridge, app, fib } = setup();
    const result = await bridge.setFileContext(["src/app.ts", fib]);
    expect(result).toEqual({ status: "success", file_count: 2, context_source: "explicit_specification" });
    expect(bridge.getFileContext()).toEqual({
      file_paths: [app, fib],
      file_count: 2,
      context_source: "explicit_specification",
    });
  });

  it("drops a path outside the repository, a symlink pointing outside, a missing file, .git and a directory", async () => {
    const { bridge, secret, app } = setup();
    const result = await bridge.setFileContext([
      "src/app.ts",
      secret,
      "../outside/secret.txt",
      "src/link-out.txt",
      "src/missing.ts",
      ".git/config",
      "src",
    ]);
    expect(result.status).toBe("warning");
    expect(result.file_count).toBe(1);
    expect(bridge.getFileContext().file_paths).toEqual([app]);
    const message = result.message ?? "";
    expect(message).toContain("dropped 6 of 7 paths");
    expect(message).toContain(`${secret}: outside the repository`);
    expect(message).toContain("../outside/secret.txt: outside the repository");
    expect(message).toContain("src/link-out.txt: resolves outside the repository (through a symlink)");
    expect(message).toContain("src/missing.ts: does not exist");
    expect(message).toContain(".git/config: inside .git");
    expect(message).toContain("src: not a regular file");
  });

  it("reports an error for paths that are not a list", async () => {
    const { bridge } = setup();
    const result = await bridge.setFileContext("src/app.ts" as never);
    expect(result).toMatchObject({
      status: "error",
      file_count: 0,
      message: "paths: expected an array of file paths",
    });
  });

  it("resolves a symlink that stays inside the repository to its target", async () => {
    const { bridge, app } = setup();
    await bridge.setFileContext(["src/link-in.ts", "src/app.ts"]);
    expect(bridge.getFileContext().file_paths).toEqual([app]);
  });

  it("reports an error and empties the context when no path is usable", async () => {
    const { bridge } = setup();
    await bridge.setFileContext(["src/app.ts"]);
    const result = await bridge.setFileContext(["nope.ts"], "associative_matching");
    expect(result).toMatchObject({ status: "error", file_count: 0, context_source: "associative_matching" });
    expect(bridge.getFileContext().file_count).toBe(0);
  });

  it("finds the relevant file for a query with the default memory and makes it the context", async () => {
    const { bridge, fib } = setup();
    const paths = await bridge.getContextForQuery("make fibonacci iterative");
    expect(paths[0]).toBe(fib);
    expect(bridge.getFileContext()).toMatchObject({
      file_paths: paths,
      context_source: "associative_matching",
    });
  });

  it("filters what a memory system returns through the file access rules", async () => {
    const memory: MemorySystem = {
      getRelevantContextFor: async () => ({
        matches: [{ path: "/etc/passwd" }, { path: "src/link-out.txt" }, { path: "src/app.ts" }],
      }),
    };
    const { bridge, app } = setup({ memory });
    expect(await bridge.getContextForQuery("anything")).toEqual([app]);
  });

  it("returns [] and leaves the context alone when the memory fails or finds nothing usable", async () => {
    const failing: MemorySystem = {
      getRelevantContextFor: async () => {
        throw new Error("index offline");
      },
    };
    const { bridge, app } = setup({ memory: failing });
    await bridge.setFileContext(["src/app.ts"]);
    expect(await bridge.getContextForQuery("fibonacci")).toEqual([]);
    expect(await bridge.getContextForQuery("")).toEqual([]);
    expect(bridge.getFileContext()).toMatchObject({
      file_paths: [app],
      context_source: "explicit_specification",
    });

    const outsideOnly = setup({
      memory: { getRelevantContextFor: async () => ({ matches: [{ path: "/etc/hostname" }] }) },
    });
    await outsideOnly.bridge.setFileContext(["src/app.ts"]);
    expect(await outsideOnly.bridge.getContextForQuery("hostname")).toEqual([]);
    expect(outsideOnly.bridge.getFileContext().file_paths).toEqual([outsideOnly.app]);

    const withError = setup({
      memory: {
        getRelevantContextFor: async () => ({ matches: [{ path: "src/app.ts" }], error: "partial" }),
      },
    });
    expect(await withError.bridge.getContextForQuery("app")).toEqual([]);
  });

  it("sends the context as repo-relative editable files when aider_ai_code names none", async () => {
    const { bridge } = setup();
    await bridge.setFileContext(["src/math/fibonacci.ts", "src/app.ts"]);
    const result = await bridge.callAiderTool("aider_ai_code", { ai_coding_prompt: "make it iterative" });
    expect(result.status).toBe("COMPLETE");
    expect(result.notes.editable_files).toEqual(["src/math/fibonacci.ts", "src/app.ts"]);
    expect(result.content).toContain("diff --git a/src/math/fibonacci.ts");

    const explicit = await bridge.callAiderTool("aider_ai_code", {
      ai_coding_prompt: "x",
      relative_editable_files: ["README.md"],
    });
    expect(explicit.notes.editable_files).toEqual(["README.md"]);
  });

  it("uses a custom FileAccess in place of the default", async () => {
    const { repo } = setup();
    const onlyMarkdown = {
      check: async (path: string) => {
        if (!path.endsWith(".md")) return { ok: false as const, reason: "only markdown" };
        return new RepoFileAccess(repo.root).check(path);
      },
    };
    const bridge = new AiderBridge({
      server: fakeStdioServer("success"),
      repoPath: repo.root,
      fileAccess: onlyMarkdown,
    });
    bridges.push(bridge);
    const result = await bridge.setFileContext(["README.md", "src/app.ts"]);
    expect(result).toMatchObject({
      status: "warning",
      file_count: 1,
      message: "dropped 1 of 2 paths: src/app.ts: only markdown",
    });
  });
});
