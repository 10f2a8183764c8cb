/**
 * commitIdentityEnv on real temp repositories: the configured identity where there is one (the
 * author's and committer's own keys over user's, the last value of a key), drydock's otherwise.
 */
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { commitIdentityEnv } from "../../../src/workspace/host-git.js";
import { git, isolateGitConfig, makeRepo, Scratch } from "./host-repo-fixture.js";

describe("commitIdentityEnv", () => {
  let scratch: Scratch;
  beforeAll(() => isolateGitConfig());
  afterEach(() => scratch.dispose());

  it("gives the configured identity as variables (the committing git reads no global configuration)", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    git(dir, "config", "author.email", "author@example.com");
    git(dir, "config", "--add", "committer.name", "First");
    git(dir, "config", "--add", "committer.name", "Last");
    const env = await commitIdentityEnv(dir);
    expect(env.GIT_AUTHOR_EMAIL).toBe("author@example.com");
    expect(env.GIT_COMMITTER_NAME).toBe("Last");
  });

  it("falls back to drydock for each part no key gives", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    git(dir, "config", "--unset", "user.name");
    git(dir, "config", "--unset", "user.email");
    git(dir, "config", "committer.email", "committer@example.com");
    expect(await commitIdentityEnv(dir)).toEqual({
      GIT_AUTHOR_NAME: "drydock",
      GIT_AUTHOR_EMAIL: "drydock@localhost",
      GIT_COMMITTER_NAME: "drydock",
      GIT_COMMITTER_EMAIL: "committer@example.com",
    });
  });
});
