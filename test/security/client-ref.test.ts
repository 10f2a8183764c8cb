/**
 * A client's `ref` in session_create is a branch, a tag, HEAD or a commit id, never git's revision
 * syntax: a reflog entry (`HEAD@{1}`) reaches a commit the user removed with `reset --hard`, a
 * `rev:path` a blob, `:/text` a search of every message. Each is refused before any box starts,
 * naming the field and the forms it may take.
 */
import { describe, expect, it } from "vitest";
import { failure, inMemoryDrydock } from "../helpers/mcp-client.js";
import { git, tempRepo } from "../helpers/repos.js";

describe("session_create's ref", () => {
  it("refuses reflog entries, paths, searches, ranges and ancestry, so a removed commit stays out of reach", async () => {
    using repo = tempRepo({ "README.md": "hello\n" });
    repo.write("secret.txt", "removed by the user\n");
    git(repo.path, "add", "secret.txt");
    git(repo.path, "commit", "-qm", "a secret, committed by mistake");
    git(repo.path, "reset", "-q", "--hard", "HEAD~1");
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    for (const ref of [
      "HEAD@{1}",
      "@{1}",
      "main@{1}",
      "HEAD@{1}:secret.txt",
      ":/mistake",
      "HEAD~1..HEAD@{1}",
      "HEAD^{/mistake}",
    ]) {
      const refused = failure(await drydock.client.callTool({ name: "session_create", arguments: { ref } }));
      expect(refused, ref).toMatch(
        /^ref: .* (is not a branch, tag or commit id|is not a valid branch or tag name); give a branch or tag name/,
      );
    }
    const listed = await drydock.client.callTool({ name: "session_list", arguments: {} });
    expect(JSON.stringify(listed.structuredContent)).not.toMatch(/"session_id"/);
  });
});
