/**
 * The box's Node.js: the LTS release Dockerfile.sandbox pins, with npm, npx and corepack from that
 * release, ES modules, and native addons built offline against the headers in the image; and the
 * image's requirement check still passes.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkImage } from "../../src/sandbox/image-check.js";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine, testSession } from "../helpers/sessions.js";

function pinned(arg: string): string {
  const dockerfile = readFileSync(join(process.cwd(), "Dockerfile.sandbox"), "utf8");
  const value = new RegExp(`^ARG ${arg}=(\\S+)$`, "m").exec(dockerfile)?.[1];
  if (!value) throw new Error(`Dockerfile.sandbox has no ARG ${arg}`);
  return value;
}

const ADDON = `#include <node_api.h>

static napi_value answer(napi_env env, napi_callback_info info) {
  napi_value value;
  napi_create_int32(env, 42, &value);
  return value;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "answer", NAPI_AUTO_LENGTH, answer, NULL, &fn);
  napi_set_named_property(env, exports, "answer", fn);
  return exports;
}
`;

describe("Node.js in the box", () => {
  it("is the pinned LTS release, first on PATH, with npm, npx and corepack", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const version = pinned("NODE_VERSION");
    expect((await session.bash("node --version")).output).toBe(`v${version}\n`);
    expect((await session.bash("command -v node npm npx corepack")).output).toBe(
      "/usr/local/bin/node\n/usr/local/bin/npm\n/usr/local/bin/npx\n/usr/local/bin/corepack\n",
    );
    expect((await session.bash("node -p 'typeof process.release.lts'")).output).toBe("string\n");
    expect((await session.bash("npm --version")).output).toBe(`${pinned("NPM_VERSION")}\n`);
    expect((await session.bash("npx --version")).output).toBe(`${pinned("NPM_VERSION")}\n`);
    expect((await session.bash("corepack --version")).output).toBe(`${pinned("COREPACK_VERSION")}\n`);
    // Debian's nodejs is gone, not merely shadowed.
    expect((await session.bash("ls /usr/bin/node /usr/bin/nodejs 2>&1; echo rc=$?")).output).toMatch(/rc=2/);
  });

  it("runs ES modules, from the command line and from a file", async () => {
    using repo = tempRepo({
      "package.json": JSON.stringify({ name: "esm-check", version: "1.0.0", type: "module" }),
      "lib.js": "export const double = (n) => n * 2;\n",
      "main.js": "import { double } from './lib.js';\nconsole.log(double(21), import.meta.url);\n",
    });
    await using session = await testSession(repo.path);
    const inline = await session.bash(
      `node --input-type=module -e "import { join } from 'node:path'; const { version } = await import('node:process'); console.log(join('a', 'b'), version.split('.')[0])"`,
    );
    expect(inline.output).toBe(`a/b v${pinned("NODE_VERSION").split(".")[0]}\n`);
    expect((await session.bash("node main.js")).output).toBe("42 file:///workspace/main.js\n");
  });

  it("builds a native addon with npm and node-gyp without the network", { timeout: 180_000 }, async () => {
    using repo = tempRepo({
      "package.json": JSON.stringify({ name: "answer", version: "1.0.0", gypfile: true }),
      "binding.gyp": JSON.stringify({ targets: [{ target_name: "answer", sources: ["answer.c"] }] }),
      "answer.c": ADDON,
    });
    await using session = await testSession(repo.path);
    const install = await session.bash("npm install --offline --foreground-scripts 2>&1; echo rc=$?", {
      timeoutMs: 150_000,
    });
    expect(install.output).toMatch(/rc=0\n$/);
    expect(install.output).not.toContain("nodejs.org");
    expect((await session.bash("node -p \"require('./build/Release/answer.node').answer()\"")).output).toBe(
      "42\n",
    );
  });

  it("passes the image's requirement check", async () => {
    const results = await checkImage(await testEngine(), sandboxImage());
    expect(results.filter((r) => !r.ok)).toEqual([]);
  });
});
