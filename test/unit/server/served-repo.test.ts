import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertPathInServedRepo, servedRepoRoot } from "../../../src/server/session-request-policy.js";
import { git, tempRepo, type TempRepo } from "../../helpers/repos.js";

const NOT_SERVED =
  /^repo: .* is not a repository this server serves \(.*\); omit repo .* drydock serve --allow-repo PATH$/;

describe("a repository a client names", () => {
  let repo: TempRepo;
  let root: string;
  let outside: string;

  beforeAll(() => {
    repo = tempRepo({ "src/app.py": "x = 1\n" });
    root = realpathSync(repo.path);
    outside = mkdtempSync(join(tmpdir(), "drydock-outside-"));
  });

  afterAll(() => {
    repo[Symbol.dispose]();
    rmSync(outside, { recursive: true, force: true });
  });

  it("is the served repository, or a directory in it (by real path)", async () => {
    expect(await servedRepoRoot(repo.path, [root])).toBe(root);
    expect(await servedRepoRoot(join(repo.path, "src"), [root])).toBe(root);
    symlinkSync(root, join(outside, "link"));
    expect(await servedRepoRoot(join(outside, "link"), [root])).toBe(root);
  });

  it("anything else is refused as not served, before drydock looks at it as a repository", async () => {
    for (const path of ["/etc", outside, join(outside, "missing"), `${root}-sibling`]) {
      const refused = await servedRepoRoot(path, [root]).then(
        () => "accepted",
        (error: Error) => error.message,
      );
      expect(refused, path).toMatch(NOT_SERVED);
      expect(refused, path).not.toMatch(/git init/);
    }
  });

  it("a repository nested in a served one is not served", async () => {
    const nested = join(repo.path, "vendor", "lib");
    mkdirSync(nested, { recursive: true });
    git(nested, "init", "-q");
    await expect(servedRepoRoot(nested, [root])).rejects.toThrow(NOT_SERVED);
  });

  it("compares whole path components", () => {
    expect(() => assertPathInServedRepo("/srv/app/src", ["/srv/app"])).not.toThrow();
    expect(() => assertPathInServedRepo("/srv/app", ["/srv/app"])).not.toThrow();
    expect(() => assertPathInServedRepo("/srv/apple", ["/srv/app"])).toThrow(NOT_SERVED);
  });
});
