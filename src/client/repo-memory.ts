import { execFile } from "node:child_process";
import { lstat, readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { promisify } from "node:util";
import MiniSearch from "minisearch";
import type { AssociativeMatchResult, ContextGenerationInput, MemorySystem } from "./memory-system.js";
import { identifierPartTerms, searchTerms, wordTerms } from "./search-terms.js";

const execFileAsync = promisify(execFile);

/** Options for {@link RepoMemory}. */
export interface RepoMemoryOptions {
  /** The git repository to rank files from; defaults to the current directory. */
  repoPath?: string;
  /** Files returned per query unless the query asks otherwise; default 8. */
  maxResults?: number;
  /** Files larger than this are not indexed; default 256_000 bytes. */
  maxFileBytes?: number;
  /** At most this many files are indexed (in `git ls-files` order); default 20_000. */
  maxFiles?: number;
  /**
   * Also index untracked files that .gitignore does not exclude; default false, because a
   * repository without ignore rules would drag in node_modules or a virtualenv.
   */
  includeUntracked?: boolean;
}

interface IndexedFile {
  id: number;
  path: string;
  content: string;
}

// Words that say nothing about which file a task concerns.
const stopWords = new Set(
  (
    "a an and are as at be but by can do does fix for from has have how i in into is it its make " +
    "me my need of on or our should so that the their then there these this to update use we when " +
    "where which why will with you your add change code file files function please"
  ).split(" "),
);

function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return lower.length < 2 || stopWords.has(lower) ? null : lower;
}

/** A file is text when its first 8 KiB hold no NUL byte (the heuristic git uses). */
function looksLikeText(buffer: Buffer): boolean {
  return !buffer.subarray(0, 8_192).includes(0);
}

/**
 * The default memory system: ranks the repository's text files for a query with BM25 (MiniSearch)
 * over three fields: the path, the parts of compound identifiers in the file, and the words of
 * its content, path matches weighing most. Files come from `git ls-files` (tracked files, and
 * optionally untracked ones that are not ignored); binaries, symlinks and large files are skipped. The index
 * is built on the first query; call {@link RepoMemory.refresh} after the files change.
 */
export class RepoMemory implements MemorySystem {
  readonly repoPath: string;
  private readonly maxResults: number;
  private readonly maxFileBytes: number;
  private readonly maxFiles: number;
  private readonly includeUntracked: boolean;
  private index: Promise<MiniSearch<IndexedFile>> | undefined;

  constructor(options: RepoMemoryOptions = {}) {
    this.repoPath = resolve(options.repoPath ?? process.cwd());
    this.maxResults = options.maxResults ?? 8;
    this.maxFileBytes = options.maxFileBytes ?? 256_000;
    this.maxFiles = options.maxFiles ?? 20_000;
    this.includeUntracked = options.includeUntracked ?? false;
  }

  /** Forgets the index; the next query rebuilds it from the files as they are then. */
  refresh(): void {
    this.index = undefined;
  }

  /** The repository's files ranked for `input.query`, best first, as absolute paths; never throws. */
  async getRelevantContextFor(input: ContextGenerationInput): Promise<AssociativeMatchResult> {
    const query = input.query.trim();
    if (query === "") return { matches: [], error: "the query is empty" };
    let index: MiniSearch<IndexedFile>;
    try {
      index = await this.loadIndex();
    } catch (error) {
      return {
        matches: [],
        error: `could not index ${this.repoPath}: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    const limit = input.maxResults ?? this.maxResults;
    const hits = index.search(query).slice(0, limit);
    return {
      contextSummary: `${hits.length} of ${index.documentCount} indexed files match ${JSON.stringify(query)}`,
      matches: hits.map((hit) => ({ path: resolve(this.repoPath, String(hit.path)), relevance: hit.score })),
    };
  }

  private loadIndex(): Promise<MiniSearch<IndexedFile>> {
    this.index ??= this.buildIndex().catch((error: unknown) => {
      this.index = undefined;
      throw error;
    });
    return this.index;
  }

  private async listFiles(): Promise<string[]> {
    const untracked = this.includeUntracked ? ["--others", "--exclude-standard"] : [];
    const { stdout } = await execFileAsync(
      "git",
      // Listing runs nothing of the repository's own but an fsmonitor (which -o may ask): off.
      [
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.untrackedCache=false",
        "-C",
        this.repoPath,
        "ls-files",
        "-z",
        "--cached",
        ...untracked,
      ],
      {
        maxBuffer: 256 * 1024 * 1024,
        encoding: "utf8",
        timeout: 120_000,
        // The client layer has no host-git runner of its own (it imports only the MCP SDK): the
        // same rules by hand for this one read-only listing: nothing from the environment or
        // the system's config points git elsewhere, no replace objects, no network.
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GIT_"))),
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_NO_REPLACE_OBJECTS: "1",
          GIT_TERMINAL_PROMPT: "0",
          GIT_OPTIONAL_LOCKS: "0",
          GIT_CONFIG_COUNT: "2",
          GIT_CONFIG_KEY_0: "protocol.allow",
          GIT_CONFIG_VALUE_0: "never",
          GIT_CONFIG_KEY_1: "core.hooksPath",
          GIT_CONFIG_VALUE_1: "/dev/null",
        },
      },
    );
    return [...new Set(stdout.split("\0").filter((path) => path !== ""))].slice(0, this.maxFiles);
  }

  private async readText(path: string): Promise<string | undefined> {
    const absolute = resolve(this.repoPath, path);
    // lstat, not stat: a tracked symlink may point anywhere, so it is never followed.
    const info = await lstat(absolute).catch(() => undefined);
    if (!info?.isFile() || info.size > this.maxFileBytes) return undefined;
    const buffer = await readFile(absolute).catch(() => undefined);
    if (!buffer || !looksLikeText(buffer)) return undefined;
    return buffer.toString("utf8");
  }

  private async buildIndex(): Promise<MiniSearch<IndexedFile>> {
    const index = new MiniSearch<IndexedFile>({
      fields: ["path", "identifiers", "content"],
      storeFields: ["path"],
      extractField: (file, field) =>
        field === "identifiers" ? file.content : file[field as keyof IndexedFile],
      tokenize: (text, field) => {
        if (field === "content") return wordTerms(text);
        if (field === "identifiers") return identifierPartTerms(text);
        return searchTerms(text);
      },
      processTerm,
      searchOptions: {
        tokenize: searchTerms,
        processTerm,
        boost: { path: 3, identifiers: 1.5, content: 1 },
        prefix: (term) => term.length >= 4,
        combineWith: "OR",
      },
    });
    const paths = await this.listFiles();
    let id = 0;
    for (const path of paths) {
      const content = await this.readText(path);
      if (content !== undefined) index.add({ id: id++, path, content });
    }
    return index;
  }
}
