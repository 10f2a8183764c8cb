/**
 * The files an environment build plans from, read from a real temporary repository: nothing is
 * read through a link or from a FIFO or device, sizes are bounded, and each repository (and each
 * clone at one path) has an identity of its own while one commit has one source.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadEnvironment } from "../../../src/environment/load-environment.js";
import { DEFINITION_MAX_BYTES, repoFiles } from "../../../src/environment/repo-files.js";
import { EnvironmentFileError } from "../../../src/util/errors.js";
import { git, tempRepo } from "../../helpers/repos.js";

const host = mkdtempSync(join(tmpdir(), "drydock-host-"));
const SECRET = `host-secret-${Math.random().toString(36).slice(2)}`;
writeFileSync(join(host, "secret.yaml"), `env:\n  LEAK: ${SECRET}\n`);
afterAll(() => rmSync(host, { recursive: true, force: true }));

async function refusal(promise: Promise<unknown>): Promise<EnvironmentFileError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EnvironmentFileError);
  expect(String((error as Error).message)).not.toContain(SECRET);
  return error as EnvironmentFileError;
}

describe("repoFiles", () => {
  it("refuses a definition that is a link, in the working tree and in a commit, without saying what it points at", async () => {
    using repo = tempRepo({ "README.md": "x\n" });
    symlinkSync(join(host, "secret.yaml"), join(repo.path, ".drydock-link"));
    execFileSync("mkdir", [join(repo.path, ".drydock")]);
    symlinkSync(join(host, "secret.yaml"), join(repo.path, ".drydock/environment.yaml"));
    const commit = repo.commit("link");
    for (const ref of [undefined, commit]) {
      const error = await refusal(loadEnvironment(await repoFiles(repo.path, ref)));
      expect(error.message).toMatch(
        /^\.drydock\/environment\.yaml: is a symbolic link, not a regular file; /,
      );
      expect(error.message).not.toContain(host);
    }
  });

  it("refuses a definition below a linked directory", async () => {
    using repo = tempRepo({ "README.md": "x\n", ".drydock/environment.yaml": 'setup: ["true"]\n' });
    const files = await repoFiles(repo.path);
    await files.list();
    // The listing was taken; the directory is then swapped for a link to the host.
    rmSync(join(repo.path, ".drydock"), { recursive: true });
    execFileSync("mkdir", [join(host, "dir")]);
    writeFileSync(join(host, "dir", "environment.yaml"), `env:\n  LEAK: ${SECRET}\n`);
    symlinkSync(join(host, "dir"), join(repo.path, ".drydock"));
    const error = await refusal(files.read(".drydock/environment.yaml"));
    expect(error.message).toMatch(/lies below a symbolic link/);
  });

  it("refuses a tracked file replaced by a FIFO without opening it (it would never answer)", async () => {
    using repo = tempRepo({ "requirements.txt": "a==1\n", ".drydock/environment.yaml": 'setup: ["true"]\n' });
    unlinkSync(join(repo.path, "requirements.txt"));
    execFileSync("mkfifo", [join(repo.path, "requirements.txt")]);
    const error = await refusal(loadEnvironment(await repoFiles(repo.path)));
    expect(error.message).toMatch(/^requirements\.txt: is a FIFO, not a regular file/);
  });

  it("keys a key file that is a link by its target's text, never opening the target", async () => {
    using repo = tempRepo({ ".drydock/environment.yaml": 'setup: ["true"]\n' });
    execFileSync("mkfifo", [join(host, "fifo")]);
    symlinkSync(join(host, "fifo"), join(repo.path, "requirements.txt"));
    symlinkSync("/dev/zero", join(repo.path, "package.json"));
    repo.commit("links");
    for (const ref of [undefined, "HEAD"]) {
      const loaded = await loadEnvironment(await repoFiles(repo.path, ref));
      expect(loaded.keyFiles.map((f) => f.path)).toEqual(["package.json", "requirements.txt"]);
    }
  });

  it("refuses a definition over the size limit, naming the file, its size and the limit", async () => {
    const big = `# ${"x".repeat(DEFINITION_MAX_BYTES)}\nsetup: [true]\n`;
    using repo = tempRepo({ ".drydock/environment.yaml": big });
    for (const ref of [undefined, "HEAD"]) {
      const error = await refusal(loadEnvironment(await repoFiles(repo.path, ref)));
      expect(error.message).toContain(
        `.drydock/environment.yaml: is ${big.length} bytes, over the limit of ${DEFINITION_MAX_BYTES} bytes`,
      );
    }
  });

  it("gives two repositories with the same files different identities, and a commit one source wherever it is", async () => {
    const files = { ".drydock/environment.yaml": 'setup: ["true"]\n', "requirements.txt": "a==1\n" };
    using a = tempRepo(files);
    using b = tempRepo(files);
    const [ta, tb] = [await repoFiles(a.path), await repoFiles(b.path)];
    expect(ta.repoId).not.toBe(tb.repoId);
    expect(ta.source).not.toBe(tb.source);
    expect((await repoFiles(a.path)).repoId).toBe(ta.repoId);
    // A clone holds the same commit: its source (what keys a commit's image) is the same.
    const clone = mkdtempSync(join(tmpdir(), "drydock-clone-"));
    try {
      git(clone, "clone", "-q", a.path, ".");
      const [ca, cc] = [await repoFiles(a.path, "HEAD"), await repoFiles(clone, "HEAD")];
      expect(cc.source).toBe(ca.source);
      expect(cc.repoId).not.toBe(ca.repoId);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });

  it("a repository deleted and cloned again at the same path is another repository", async () => {
    using a = tempRepo({ "README.md": "a\n" });
    const before = (await repoFiles(a.path)).repoId;
    const keep = mkdtempSync(join(tmpdir(), "drydock-keep-"));
    try {
      git(keep, "clone", "-q", a.path, ".");
      // Another file first, so the new .git cannot simply reuse the freed inode.
      rmSync(join(a.path, ".git"), { recursive: true, force: true });
      writeFileSync(join(a.path, "filler"), "x");
      rmSync(a.path, { recursive: true, force: true });
      git(tmpdir(), "clone", "-q", keep, a.path);
      expect((await repoFiles(a.path)).repoId).not.toBe(before);
    } finally {
      rmSync(keep, { recursive: true, force: true });
    }
  });
});
