/**
 * The README's examples, run as written: each block is taken from README.md (or the docs file holding it), so an example
 * that stops working fails here. `drydock` is the built CLI on PATH; paths under /tmp are moved
 * into a directory of the test's own.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, tempRepo } from "../helpers/repos.js";

let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "drydock-readme-"));
  mkdirSync(join(scratch, "bin"));
  const shim = join(scratch, "bin", "drydock");
  writeFileSync(
    shim,
    `#!/bin/sh\nexec "${process.execPath}" "${join(process.cwd(), "dist", "cli", "main.js")}" "$@"\n`,
  );
  chmodSync(shim, 0o755);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The fenced shell block of `file` (README.md or a docs file) that contains `marker`, its /tmp paths moved under the test's directory. */
function block(marker: string, file = "README.md"): string {
  const readme = readFileSync(join(process.cwd(), file), "utf8");
  const found = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((b) => b.includes(marker));
  expect(found, `exactly one block of ${file} holds ${marker}`).toHaveLength(1);
  return found[0]!.replaceAll("/tmp/", `${scratch}/tmp/`);
}

function sh(script: string, cwd: string): Promise<{ code: number | null; out: string }> {
  const child = spawn("bash", ["-e", "-o", "pipefail", "-c", script], {
    cwd,
    env: {
      ...process.env,
      PATH: `${join(scratch, "bin")}:${process.env.PATH}`,
      DRYDOCK_STATE_DIR: join(scratch, "state"),
      DRYDOCK_POOL: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, out })));
}

describe("README examples", () => {
  it("Project environments: env show, then run builds the environment and the tests pass offline", async () => {
    const ran = await sh(block("mkdir -p /tmp/envdemo"), scratch);
    expect(ran.out).toMatch(/definition: \.drydock\/environment\.yaml/);
    expect(ran.out).toMatch(/1 passed/);
    const tag = /^image: (drydock-env:[0-9a-f]{12}) /m.exec(ran.out)?.[1];
    expect(tag, "env show names the image").toBeDefined();
    expect(ran.out).toMatch(new RegExp(`^${tag}\\s+environment\\s`, "m"));
    expect(ran.code).toBe(0);
  });

  it("run: 'sed ... && make test' applies the fix as a branch when make test passes", async () => {
    const line = "drydock run --apply -- 'sed -i s/teh/the/ README.md && make test'";
    expect(block(line)).toContain(`$ ${line}`);
    using repo = tempRepo({
      "README.md": "teh project\n",
      Makefile: "test:\n\tpython3 -m pytest -q\n",
      "test_readme.py": "def test_readme():\n    assert open('README.md').read() == 'the project\\n'\n",
    });
    const ran = await sh(line, repo.path);
    expect(ran.out).toMatch(/1 passed/);
    expect(ran.out).toMatch(/applied as drydock\/[0-9a-f]{12}/);
    expect(ran.code).toBe(0);
    const branch = /applied as (drydock\/[0-9a-f]{12})/.exec(ran.out)![1]!;
    expect(git(repo.path, "show", `${branch}:README.md`)).toBe("the project\n");
    expect(readFileSync(join(repo.path, "README.md"), "utf8")).toBe("teh project\n");
  });

  it("eval quick start: the patch agent resolves the calc task", async () => {
    const ran = await sh(block("mkdir -p /tmp/evaldemo"), scratch);
    expect(ran.out).toMatch(/resolved 1\/1/);
    expect(ran.code).toBe(0);
  });

  it("eval with an environment: the task's tests import a PyPI package in a box with no network", async () => {
    const ran = await sh(block("mkdir -p /tmp/evalenv", "docs/eval.md"), scratch);
    expect(ran.out).toMatch(/resolved 1\/1/);
    expect(ran.code).toBe(0);
  });
});
