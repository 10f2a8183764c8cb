import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RepoMemory } from "../../../src/index.js";
import { makeTempRepo, type TempRepo } from "./fixtures.js";

const repos: TempRepo[] = [];
afterEach(() => repos.splice(0).forEach((repo) => repo.dispose()));

/** A small project where each query has one obviously relevant file among distractors. */
function sampleRepo(): TempRepo {
  const repo = makeTempRepo({
    "src/math/fibonacci.ts": [
      "/** The n-th Fibonacci number; overflows past n = 78. */",
      "export function fibonacci(n: number): number {",
      "  let [a, b] = [0, 1];",
      "  for (let i = 0; i < n; i++) [a, b] = [b, a + b];",
      "  return a;",
      "}",
    ].join("\n"),
    "src/session/session_store.py": [
      "class SessionStore:",
      "    def persist_session(self, session_id):",
      "        self.backend.write(session_id)",
    ].join("\n"),
    "src/http/parse-response.ts":
      "export function parseHTTPResponse(raw: string) { return raw.split('\\r\\n'); }\n",
    "src/index.ts": "export * from './math/fibonacci';\nexport * from './http/parse-response';\n",
    "README.md": "# Demo\n\nA demo project with math helpers, sessions and an HTTP parser.\n",
    "docs/notes.md": "Notes: the team discussed numbers and sequences today.\n",
  });
  repos.push(repo);
  return repo;
}

const top = async (memory: RepoMemory, query: string) => {
  const result = await memory.getRelevantContextFor({ query });
  expect(result.error).toBeUndefined();
  return result.matches.map((match) => match.path);
};

describe("RepoMemory", () => {
  it("puts the obviously relevant file first, as an absolute path", async () => {
    const repo = sampleRepo();
    const memory = new RepoMemory({ repoPath: repo.root });
    expect((await top(memory, "fix the fibonacci overflow"))[0]).toBe(
      join(repo.root, "src/math/fibonacci.ts"),
    );
    expect((await top(memory, "persist the session store"))[0]).toBe(
      join(repo.root, "src/session/session_store.py"),
    );
    expect((await top(memory, "http response parser"))[0]).toBe(
      join(repo.root, "src/http/parse-response.ts"),
    );
  });

  it("matches split identifiers: words find SessionStore, an identifier finds its words", async () => {
    const repo = sampleRepo();
    const memory = new RepoMemory({ repoPath: repo.root });
    expect((await top(memory, "persistSession"))[0]).toBe(join(repo.root, "src/session/session_store.py"));
    expect((await top(memory, "parseHttpResponse"))[0]).toBe(join(repo.root, "src/http/parse-response.ts"));
  });

  it("returns at most maxResults files with decreasing relevance", async () => {
    const repo = sampleRepo();
    const memory = new RepoMemory({ repoPath: repo.root, maxResults: 2 });
    const result = await memory.getRelevantContextFor({ query: "fibonacci http session demo" });
    expect(result.matches).toHaveLength(2);
    expect(result.matches[0]!.relevance!).toBeGreaterThanOrEqual(result.matches[1]!.relevance!);
    expect(
      (await memory.getRelevantContextFor({ query: "fibonacci http session", maxResults: 1 })).matches,
    ).toHaveLength(1);
  });

  it("skips binary, oversized and symlinked files", async () => {
    const repo = sampleRepo();
    const outside = mkdtempSync(join(tmpdir(), "drydock-outside-"));
    try {
      writeFileSync(join(outside, "secret.txt"), "zebra");
      repo.write("assets/zebra.bin", Buffer.from([0x7a, 0x65, 0x62, 0x72, 0x61, 0, 1, 2]));
      repo.write("data/zebra.txt", "zebra ".repeat(50_000));
      repo.write("src/zebra-notes.md", "a note about a zebra");
      symlinkSync(join(outside, "secret.txt"), join(repo.root, "zebra-link.txt"));
      execFileSync("git", ["add", "zebra-link.txt"], { cwd: repo.root });
      const memory = new RepoMemory({ repoPath: repo.root, maxFileBytes: 10_000 });
      expect(await top(memory, "zebra")).toEqual([join(repo.root, "src/zebra-notes.md")]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("indexes untracked files only when asked, and never ignored ones", async () => {
    const repo = sampleRepo();
    repo.write(".gitignore", "build/\n");
    repo.write("build/wombat.js", "wombat wombat", false);
    repo.write("src/draft-wombat.ts", "export const wombat = 1;", false);
    expect(await top(new RepoMemory({ repoPath: repo.root }), "wombat")).toEqual([]);
    expect(await top(new RepoMemory({ repoPath: repo.root, includeUntracked: true }), "wombat")).toEqual([
      join(repo.root, "src/draft-wombat.ts"),
    ]);
  });

  it("sees new files only after refresh", async () => {
    const repo = sampleRepo();
    const memory = new RepoMemory({ repoPath: repo.root });
    expect(await top(memory, "quokka")).toEqual([]);
    repo.write("src/quokka.ts", "export const quokka = 1;");
    expect(await top(memory, "quokka")).toEqual([]);
    memory.refresh();
    expect(await top(memory, "quokka")).toEqual([join(repo.root, "src/quokka.ts")]);
  });

  it("reports a directory that is not a git repository as an error, not a throw", async () => {
    const dir = mkdtempSync(join(tmpdir(), "drydock-nogit-"));
    try {
      const result = await new RepoMemory({ repoPath: dir }).getRelevantContextFor({ query: "anything" });
      expect(result.matches).toEqual([]);
      expect(result.error).toContain(`could not index ${dir}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("answers an empty query with an error", async () => {
    const repo = sampleRepo();
    expect((await new RepoMemory({ repoPath: repo.root }).getRelevantContextFor({ query: "  " })).error).toBe(
      "the query is empty",
    );
  });
});
