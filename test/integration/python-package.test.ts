/**
 * The Python package (python/: drydock-sandbox) through its own pytest suite: the client's verbs
 * and errors against a real `drydock serve --http` of this checkout, Inspect's sandbox conformance
 * suite on sandbox="drydock", an Inspect eval in drydock boxes and the same on Inspect's docker
 * sandbox, mini-swe-agent's loop in a box, SWE-ReX's runtime on a box, and the wheel.
 * scripts/install-python-package.sh puts the pinned frameworks in a cache (once) and this
 * checkout's package in it (every run).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("the Python package", () => {
  it("passes its pytest suite against this checkout's server", { timeout: 3_600_000 }, async () => {
    const install = await run("bash", [join(process.cwd(), "scripts", "install-python-package.sh")], {
      maxBuffer: 64 * 1024 * 1024,
      timeout: 1_800_000,
    }).catch((error: { stderr?: string; message: string }) => {
      throw new Error(`scripts/install-python-package.sh failed:\n${error.stderr ?? error.message}`);
    });
    const venv = install.stdout.trim().split("\n").at(-1)!;
    // The suite starts its own servers, each with the state directory it makes.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DRYDOCK_TEST_CLI: join(process.cwd(), "dist", "cli", "main.js"),
    };
    delete env.DRYDOCK_STATE_DIR;
    delete env.DRYDOCK_TOKEN;
    const result = await run(
      join(venv, "bin", "python"),
      ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no", join(process.cwd(), "python", "tests")],
      { cwd: join(process.cwd(), "python"), env, maxBuffer: 64 * 1024 * 1024, timeout: 3_000_000 },
    ).catch((error: { stdout?: string; stderr?: string; message: string }) => ({
      failed: true,
      stdout: `${error.stdout ?? ""}\n${error.stderr ?? ""}\n${error.message}`,
    }));
    expect("failed" in result ? result.stdout : "", "pytest failed").toBe("");
    expect(result.stdout).toMatch(/\d+ passed/);
  });
});
