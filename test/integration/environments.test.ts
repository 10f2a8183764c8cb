/**
 * Project environments against the real engine and the real registries reachable here: each
 * repository's definition is built into an image (with the network, during the build only), and a
 * session's box, with no network, runs the project's own tests; the diff holds only the change.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { EnvironmentBuildError, EnvironmentImages } from "../../src/environment/environment-images.js";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine, testSession } from "../helpers/sessions.js";

const PY_PROJECT = {
  "pyproject.toml": `[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
[project]
name = "greet"
version = "0.1.0"
dependencies = ["tomli-w==1.0.0"]
[tool.setuptools.packages.find]
where = ["src"]
`,
  "src/greet/__init__.py":
    'import tomli_w\n\ndef hello(name):\n    return tomli_w.dumps({"hello": name}).strip()\n',
  "tests/test_greet.py":
    'from greet import hello\n\ndef test_hello():\n    assert hello("box") == \'hello = "box"\'\n',
  ".gitignore": "*.egg-info/\n__pycache__/\n",
  ".drydock/environment.yaml": "# the project's own dependencies, from PyPI\nsetup:\n  - pip install -e .\n",
};

const NODE_LOCK = {
  name: "calc",
  version: "1.0.0",
  lockfileVersion: 3,
  requires: true,
  packages: {
    "": { name: "calc", version: "1.0.0", dependencies: { "is-number": "7.0.0" } },
    "node_modules/is-number": {
      version: "7.0.0",
      integrity:
        "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==",
      license: "MIT",
      engines: { node: ">=0.12.0" },
    },
  },
};

const NODE_PROJECT = {
  "package.json": JSON.stringify({
    name: "calc",
    version: "1.0.0",
    private: true,
    scripts: { test: "node test.js" },
    dependencies: { "is-number": "7.0.0" },
  }),
  "package-lock.json": JSON.stringify(NODE_LOCK, null, 2),
  "index.js":
    "const isNumber = require('is-number');\nmodule.exports = (x) => isNumber(x) ? Number(x) * 2 : null;\n",
  "test.js":
    "const assert = require('assert');\nconst double = require('./index');\nassert.strictEqual(double('21'), 42);\nassert.strictEqual(double('x'), null);\nconsole.log('node tests passed');\n",
  ".drydock/environment.yaml": "setup: npm ci\n",
};

async function environments(): Promise<EnvironmentImages> {
  return new EnvironmentImages(await testEngine(), { baseImage: sandboxImage() });
}

describe("project environments", () => {
  it("a Python project whose tests need a PyPI package runs them in a box with no network", async () => {
    using repo = tempRepo(PY_PROJECT);
    const envs = await environments();
    const lines: string[] = [];
    const env = await envs.imageFor({ repo: repo.path, onLine: (l) => lines.push(l) });
    expect(env.image).toMatch(/^drydock-env:/);
    // A second ask is the cache: nothing is built.
    const again = await envs.imageFor({ repo: repo.path });
    expect(again.image).toBe(env.image);
    expect(again.built).toBeUndefined();

    await using session = await testSession(repo.path, { image: env.image });
    const offline = await session.bash(
      "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 443), 2)'",
      {},
    );
    expect(offline.exitCode).not.toBe(0);
    const tests = await session.bash("python3 -m pytest -q 2>&1 | tail -2", {});
    expect(tests.output).toMatch(/1 passed/);
    expect((await session.bash("git status --porcelain", {})).output).toBe("");
    await session.bash("sed -i 's/hello/hi/' src/greet/__init__.py", {});
    const diff = await session.diff();
    expect(diff.match(/^diff --git .*$/gm)).toEqual([
      "diff --git a/src/greet/__init__.py b/src/greet/__init__.py",
    ]);
  });

  it("a Node project gets its node_modules from npm: tests pass, the directory stays writable, the diff stays clean", async () => {
    using repo = tempRepo(NODE_PROJECT);
    const env = await (await environments()).imageFor({ repo: repo.path });
    await using session = await testSession(repo.path, { image: env.image });
    const tests = await session.bash("npm test 2>&1", {});
    expect(tests.exitCode).toBe(0);
    expect(tests.output).toMatch(/node tests passed/);
    // The prepared directory is a writable directory of read-only links to the image's copy.
    const layout = await session.bash(
      "mkdir node_modules/.cache && echo ok-cache; touch node_modules/is-number/x 2>/dev/null || echo ro-entry",
      {},
    );
    expect(layout.output).toMatch(/ok-cache/);
    expect(layout.output).toMatch(/ro-entry/);
    await session.bash("echo '// changed' >> index.js", {});
    const diff = await session.diff();
    expect(diff.match(/^diff --git .*$/gm)).toEqual(["diff --git a/index.js b/index.js"]);
  });

  it("a repository with only a devcontainer.json builds its Dockerfile on the sandbox image, then its lifecycle commands", async () => {
    using repo = tempRepo({
      ".devcontainer/devcontainer.json": `{
  // A Dockerfile on top of the sandbox image, as drydock documents it.
  "build": {"dockerfile": "Dockerfile"},
  "containerEnv": {"GREETING": "from-devcontainer"},
  "postCreateCommand": "pip install -r requirements.txt",
  "forwardPorts": [8000]
}`,
      ".devcontainer/Dockerfile":
        "ARG DRYDOCK_SANDBOX\nFROM ${DRYDOCK_SANDBOX}\nUSER root\nRUN echo built-by-dockerfile > /opt/marker\nUSER agent\n",
      "requirements.txt": "tomli-w==1.0.0\n",
      "test_it.py":
        "import os, tomli_w\n\ndef test_it():\n    assert open('/opt/marker').read().strip() == 'built-by-dockerfile'\n    assert os.environ['GREETING'] == 'from-devcontainer'\n    assert tomli_w.dumps({'a': 1}).strip() == 'a = 1'\n",
    });
    const lines: string[] = [];
    const env = await (await environments()).imageFor({ repo: repo.path, onLine: (l) => lines.push(l) });
    expect(env.definition.kind).toBe("devcontainer");
    expect(env.definition.warnings.join("\n")).toMatch(/forwardPorts is ignored/);
    await using session = await testSession(repo.path, { image: env.image });
    const tests = await session.bash("python3 -m pytest -q test_it.py 2>&1 | tail -2", {});
    expect(tests.output).toMatch(/1 passed/);
    expect(await session.diff()).toBe("");
  });

  it("two sessions that need the same environment at once share one build", async () => {
    const nonce = randomBytes(4).toString("hex");
    using repo = tempRepo({
      ".drydock/environment.yaml": `env: {NONCE: "${nonce}"}\nsetup: [echo prepared > made.txt]\n`,
    });
    const envs = await environments();
    const lines: [string[], string[]] = [[], []];
    const [a, b] = await Promise.all([
      envs.imageFor({ repo: repo.path, onLine: (l) => lines[0].push(l) }),
      envs.imageFor({ repo: repo.path, onLine: (l) => lines[1].push(l) }),
    ]);
    expect(a.image).toBe(b.image);
    const builds = lines.flat().filter((l) => l.startsWith("building environment"));
    expect(builds).toHaveLength(1);
    expect(lines.flat().filter((l) => l.startsWith("waiting for the build"))).toHaveLength(1);
    await using session = await testSession(repo.path, { image: a.image });
    expect((await session.bash("cat made.txt", {})).output).toBe("prepared\n");
    expect(await session.diff()).toBe("");
    await session.destroy();
    execFileSync("docker", ["rmi", "-f", a.image], { stdio: "ignore" });
  });

  it("a failing setup command names the file, the line and the exit code, and tags no image", async () => {
    const nonce = randomBytes(4).toString("hex");
    using repo = tempRepo({
      ".drydock/environment.yaml": `env:\n  NONCE: "${nonce}"\nsetup:\n  - echo preparing\n  - echo broken >&2; exit 3\n`,
    });
    const envs = await environments();
    const status = await envs.status(repo.path);
    const error = await envs.imageFor({ repo: repo.path }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvironmentBuildError);
    expect((error as Error).message).toMatch(
      /^\.drydock\/environment\.yaml:5: setup\[2\] failed with exit code 3: echo broken >&2; exit 3\n/,
    );
    expect((error as Error).message).toMatch(/\| broken/);
    expect(await (await testEngine()).hasImage(status.image)).toBe(false);
  });

  it("a missing Dockerfile and an unknown key are one clear error each, before any build", async () => {
    using missing = tempRepo({
      ".devcontainer/devcontainer.json": '{\n  "build": {"dockerfile": "Nope.Dockerfile"}\n}',
    });
    await expect((await environments()).imageFor({ repo: missing.path })).rejects.toThrow(
      /^\.devcontainer\/devcontainer\.json:2: the Dockerfile \.devcontainer\/Nope\.Dockerfile is not in the repository/,
    );
    using unknown = tempRepo({ ".drydock/environment.yaml": "setup: [make]\nimage: x\n" });
    await expect((await environments()).imageFor({ repo: unknown.path })).rejects.toThrow(
      '.drydock/environment.yaml:2: unknown key "image"; the keys are packages, env, setup, key_files',
    );
  });
});
