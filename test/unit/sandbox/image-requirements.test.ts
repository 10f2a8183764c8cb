import { describe, expect, it } from "vitest";
import { IMAGE_REQUIREMENTS, parseProbe } from "../../../src/sandbox/image-requirements.js";

describe("parseProbe", () => {
  it("reads each requirement's line, and counts one the probe never reported as missing", () => {
    const output = [
      "ok\tbash\t/usr/bin/bash",
      "missing\tgit\tnot found: git",
      "noise from a profile script",
      ...IMAGE_REQUIREMENTS.filter((r) => !["bash", "git", "aider"].includes(r.name)).map(
        (r) => `ok\t${r.name}\tx`,
      ),
    ].join("\n");
    const results = parseProbe(output);
    expect(results.map((r) => r.requirement.name)).toEqual(IMAGE_REQUIREMENTS.map((r) => r.name));
    const byName = Object.fromEntries(results.map((r) => [r.requirement.name, r]));
    expect(byName.bash).toMatchObject({ ok: true, detail: "/usr/bin/bash" });
    expect(byName.git).toMatchObject({ ok: false, detail: "not found: git" });
    expect(byName.git!.requirement.breaks).toMatch(/sessions cannot start/);
    expect(byName.aider).toMatchObject({ ok: false, detail: expect.stringMatching(/did not report it/) });
    expect(results.filter((r) => !r.ok)).toHaveLength(2);
  });
});
