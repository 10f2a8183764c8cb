import { mkdtempSync, readdirSync, rmSync, statSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tar from "tar-stream";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { keptRanges, SnapshotCache } from "../../../src/workspace/snapshot-cache.js";
import { planSnapshot } from "../../../src/workspace/snapshot-plan.js";
import { git, isolateGitConfig, makeRepo, Scratch, writeFiles } from "./host-repo-fixture.js";

beforeAll(isolateGitConfig);

/** The regular files and links of a tar stream, by path. */
async function entries(chunks: AsyncIterable<Buffer>): Promise<Map<string, string>> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(c);
  const extract = tar.extract();
  const found = new Map<string, string>();
  const done = (async () => {
    for await (const entry of extract) {
      const body: Buffer[] = [];
      for await (const c of entry) body.push(c as Buffer);
      const h = entry.header;
      found.set(h.name, h.type === "symlink" ? `-> ${h.linkname}` : Buffer.concat(body).toString("utf8"));
    }
  })();
  extract.end(Buffer.concat([...parts, Buffer.alloc(1024)]));
  await done;
  return found;
}

describe("the commit's tree for a snapshot", () => {
  let scratch: Scratch;
  let cacheDir: string;
  afterEach(() => {
    scratch.dispose();
    rmSync(cacheDir, { recursive: true, force: true });
  });

  function dirtyRepo(): string {
    scratch = new Scratch();
    cacheDir = mkdtempSync(join(tmpdir(), "drydock-cache-"));
    const repo = makeRepo(join(scratch.root, "repo"), {
      ".gitignore": "*.log\n",
      "keep.txt": "keep\n",
      "edit.txt": "before\n",
      "gone.txt": "gone\n",
      link: { symlink: "keep.txt" },
      "run.sh": { exec: "#!/bin/sh\n" },
    });
    writeFiles(repo, { "edit.txt": "after\n", "new.txt": "untracked\n", "noise.log": "ignored\n" });
    unlinkSync(join(repo, "gone.txt"));
    return repo;
  }

  it("takes clean files from git and leaves out the ones the working tree changed", async () => {
    const repo = dirtyRepo();
    const plan = await planSnapshot(repo);
    expect(plan.files.sort()).toEqual(["edit.txt", "gone.txt", "new.txt"]);
    const cache = new SnapshotCache(cacheDir, 64 * 1024 * 1024);
    const sources: boolean[] = [];
    const first = await entries(
      cache.tree(plan.repo.root, plan.commit!, plan.skip, (hit) => sources.push(hit)),
    );
    expect([...first.keys()].sort()).toEqual([".gitignore", "keep.txt", "link", "run.sh"]);
    expect(first.get("keep.txt")).toBe("keep\n");
    expect(first.get("link")).toBe("-> keep.txt");

    // The second time the same commit comes from the cache, with the same entries and bytes.
    const again = await entries(
      cache.tree(plan.repo.root, plan.commit!, plan.skip, (hit) => sources.push(hit)),
    );
    expect(sources).toEqual([false, true]);
    expect(again).toEqual(first);
    // A different skip set is served from the same entry.
    const all = await entries(cache.tree(plan.repo.root, plan.commit!, new Set()));
    expect(all.get("edit.txt")).toBe("before\n");
    expect(all.get("gone.txt")).toBe("gone\n");
  });

  it("sends only the ref's tree for a session on a ref", async () => {
    const repo = dirtyRepo();
    const plan = await planSnapshot(repo, "HEAD");
    expect(plan.files).toEqual([]);
    expect(plan.detach).toBe(plan.commit);
    await expect(planSnapshot(repo, "no-such-ref")).rejects.toThrow(/ref/);
    await expect(planSnapshot(repo, "--output=x")).rejects.toThrow(/ref/);
  });

  it("keeps the cache under its size limit, dropping the least recently used entries", async () => {
    const repo = dirtyRepo();
    const commits: string[] = [];
    for (let i = 0; i < 5; i++) {
      writeFiles(repo, { "keep.txt": `version ${i}\n` });
      git(repo, "commit", "-q", "-am", `v${i}`);
      commits.push(git(repo, "rev-parse", "HEAD").trim());
    }
    const root = (await planSnapshot(repo)).repo.root;
    const sizing = new SnapshotCache(join(cacheDir, "sizing"), 64 * 1024 * 1024);
    await entries(sizing.tree(root, commits[0]!, new Set()));
    const [tarFile] = readdirSync(join(cacheDir, "sizing"), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".tar"));
    const entryBytes = statSync(join(cacheDir, "sizing", tarFile!)).size;

    // Room for four entries: the fifth pushes out the one used least recently.
    const cache = new SnapshotCache(join(cacheDir, "lru"), entryBytes * 4 + 100);
    for (const commit of commits.slice(0, 4)) await entries(cache.tree(root, commit, new Set()));
    await entries(cache.tree(root, commits[0]!, new Set()));
    await entries(cache.tree(root, commits[4]!, new Set()));
    const kept = readdirSync(join(cacheDir, "lru"), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".tar"))
      .map((f) => f.replace(/^.*\//, "").replace(/\.tar$/, ""));
    expect(kept.sort()).toEqual([commits[0], commits[2], commits[3], commits[4]].sort());

    // A tree bigger than a quarter of the cache is not kept; a size of 0 turns the cache off.
    const tiny = new SnapshotCache(join(cacheDir, "tiny"), entryBytes);
    await entries(tiny.tree(root, commits[4]!, new Set()));
    expect(
      readdirSync(join(cacheDir, "tiny"), { recursive: true })
        .map(String)
        .filter((f) => f.endsWith(".tar")),
    ).toEqual([]);
    const off = new SnapshotCache(join(cacheDir, "off"), 0);
    const sources: boolean[] = [];
    await entries(off.tree(root, commits[4]!, new Set(), (hit) => sources.push(hit)));
    await entries(off.tree(root, commits[4]!, new Set(), (hit) => sources.push(hit)));
    expect(sources).toEqual([false, false]);
  });
});

describe("keptRanges", () => {
  it("merges neighbours and leaves out skipped entries", () => {
    const index = { paths: ["a", "b", "c", "d"], sizes: [512, 1024, 512, 512] };
    expect(keptRanges(index, new Set())).toEqual([[0, 2560]]);
    expect(keptRanges(index, new Set(["b"]))).toEqual([
      [0, 512],
      [1536, 2560],
    ]);
    expect(keptRanges(index, new Set(["a", "d"]))).toEqual([[512, 2048]]);
  });
});
