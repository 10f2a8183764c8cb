/**
 * The sandbox image's PATH holds in a login shell too (`bash -l`, as Inspect's tools and many
 * agents' shells start): Debian's /etc/profile sets PATH afresh, and the image's profile.d script
 * puts the project's venv and drydock's tools back in front, once. The image has no socat (the
 * relay is the box agent's, in Python).
 */
import { describe, expect, it } from "vitest";
import { tempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

describe("the sandbox image's PATH", () => {
  it("is the image's in a login shell, without doubling in a nested one", async () => {
    using repo = tempRepo({ "a.txt": "one\n" });
    await using session = await testSession(repo.path);
    const login = await session.bash(
      "bash -lc 'command -v python3 pytest pip; echo \"$PATH\"'; bash -lc 'bash -lc \"echo \\$PATH\"'",
    );
    const [python, pytest, pip, path, nested] = login.output.trim().split("\n");
    expect(python).toBe("/opt/venv/bin/python3");
    expect(pytest).toBe("/opt/venv/bin/pytest");
    expect(pip).toBe("/opt/venv/bin/pip");
    expect(path!.split(":").slice(0, 2)).toEqual(["/opt/drydock/bin", "/opt/venv/bin"]);
    expect(nested).toBe(path);
    expect((await session.bash("command -v socat || echo none")).output).toBe("none\n");
  });
});
