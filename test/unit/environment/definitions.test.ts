import { describe, expect, it } from "vitest";
import { parseDevcontainer } from "../../../src/environment/devcontainer-file.js";
import { parseDrydockEnvironment } from "../../../src/environment/drydock-environment-file.js";
import { EnvironmentDefinitionError, formatSource } from "../../../src/environment/environment-definition.js";
import {
  STEP_MARKER,
  environmentDockerfile,
  globMatcher,
  planEnvironment,
} from "../../../src/environment/environment-plan.js";

function errorOf(fn: () => unknown): EnvironmentDefinitionError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(EnvironmentDefinitionError);
    return error as EnvironmentDefinitionError;
  }
  throw new Error("expected an error");
}

describe("parseDrydockEnvironment", () => {
  it("reads packages, env, setup with their lines, and key files", () => {
    const d = parseDrydockEnvironment(
      "packages: [libpq-dev, make=4.3-4.1]\nenv:\n  CI: 1\n  NAME: box\nsetup:\n  - pip install -e .\n  - npm ci\nkey_files: [requirements.txt]\n",
    );
    expect(d.packages).toEqual(["libpq-dev", "make=4.3-4.1"]);
    expect(d.env).toEqual({ CI: "1", NAME: "box" });
    expect(d.setup.map((s) => [s.command, s.from.line, s.label])).toEqual([
      ["pip install -e .", 6, "setup[1]"],
      ["npm ci", 7, "setup[2]"],
    ]);
    expect(d.keyFiles).toEqual(["requirements.txt"]);
  });

  it("takes a single setup string and defaults the key files to the usual lockfiles", () => {
    const d = parseDrydockEnvironment("setup: make deps\n");
    expect(d.setup.map((s) => s.command)).toEqual(["make deps"]);
    expect(d.keyFiles).toContain("package-lock.json");
    expect(d.keyFiles).toContain("requirements*.txt");
  });

  it("an eval task's inline definition: names the task's file and line, then the definition's own line", () => {
    const e = errorOf(() =>
      parseDrydockEnvironment("setup: [a]\n\npackage: [make]\n", "tasks.jsonl:3", true),
    );
    expect(e.message).toBe(
      'tasks.jsonl:3: environment, line 3 of the definition: unknown key "package"; the keys are packages, env, setup, key_files',
    );
    const d = parseDrydockEnvironment("setup:\n  - make\n", "tasks.jsonl:3", true);
    expect(formatSource(d.setup[0]!.from)).toBe("tasks.jsonl:3: environment, line 2 of the definition");
    expect(formatSource({ file: ".drydock/environment.yaml", line: 2 })).toBe(".drydock/environment.yaml:2");
  });

  it("names the file, the line and the keys for an unknown key", () => {
    const e = errorOf(() => parseDrydockEnvironment("setup: [a]\n\npackage: [make]\n"));
    expect(e.message).toBe(
      '.drydock/environment.yaml:3: unknown key "package"; the keys are packages, env, setup, key_files',
    );
  });

  it("refuses a bad package name, a bad variable name, an empty command and a key file outside the repository", () => {
    expect(errorOf(() => parseDrydockEnvironment("packages:\n  - ok\n  - 'rm -rf /'\n")).message).toMatch(
      /^\.drydock\/environment\.yaml:3: packages: "rm -rf \/" is not a Debian package name/,
    );
    expect(errorOf(() => parseDrydockEnvironment("env:\n  1BAD: x\n")).message).toMatch(/:2: env: "1BAD"/);
    expect(errorOf(() => parseDrydockEnvironment("setup:\n  - ''\n")).message).toMatch(/:2: setup: item 1/);
    expect(errorOf(() => parseDrydockEnvironment("key_files: [../secret]\n")).message).toMatch(
      /outside the repository/,
    );
  });

  it("reports YAML syntax errors with their line", () => {
    expect(errorOf(() => parseDrydockEnvironment("setup:\n  - a\n bad: [\n")).message).toMatch(
      /^\.drydock\/environment\.yaml:\d+: not valid YAML/,
    );
  });
});

describe("parseDevcontainer", () => {
  it("maps build, env and the lifecycle commands in order, and warns about what it does not apply", () => {
    const d = parseDevcontainer(
      `{
  // comments and trailing commas are JSONC
  "name": "x",
  "build": {"dockerfile": "Dockerfile", "context": "..", "args": {"V": "1"}},
  "containerEnv": {"A": "1"},
  "postCreateCommand": ["npm", "run", "it's"],
  "onCreateCommand": {"one": "make", "two": "make more"},
  "forwardPorts": [3000],
  "features": {"ghcr.io/devcontainers/features/node:1": {}},
}`,
      ".devcontainer/devcontainer.json",
    );
    expect(d.base).toMatchObject({
      kind: "dockerfile",
      dockerfile: ".devcontainer/Dockerfile",
      context: "",
      args: { V: "1" },
    });
    expect(d.env).toEqual({ A: "1" });
    expect(d.setup.map((s) => [s.label, s.command])).toEqual([
      ["onCreateCommand.one", "make"],
      ["onCreateCommand.two", "make more"],
      ["postCreateCommand", "npm run 'it'\\''s'"],
    ]);
    expect(d.warnings.join("\n")).toMatch(/forwardPorts is ignored/);
    expect(d.warnings.join("\n")).toMatch(/features are not installed/);
  });

  it("refuses docker compose, a Dockerfile outside the repository and broken JSON, with the line", () => {
    expect(errorOf(() => parseDevcontainer('{\n"dockerComposeFile": "x.yml"}', "d.json")).message).toMatch(
      /^d\.json:2: dockerComposeFile is not supported/,
    );
    expect(
      errorOf(() =>
        parseDevcontainer('{"build": {"dockerfile": "../../Dockerfile"}}', ".devcontainer/devcontainer.json"),
      ).message,
    ).toMatch(/points outside the repository/);
    expect(errorOf(() => parseDevcontainer('{\n  "image": \n}', "d.json")).message).toMatch(
      /^d\.json:3: not valid JSON/,
    );
  });
});

describe("planEnvironment", () => {
  const definition = parseDrydockEnvironment("setup: [npm ci]\n");
  const inputs = {
    definition,
    definitionText: "setup: [npm ci]\n",
    keyFiles: [{ path: "package-lock.json", sha256: "a" }],
    baseImageId: "sha256:1234",
    source: "repository 0123456789abcdef0123456789abcdef",
  };

  it("keys the tag by the source (repository or commit), the base images, the definition and the key files", () => {
    const plan = planEnvironment(inputs);
    expect(plan.tag).toMatch(/^drydock-env:[0-9a-f]{12}$/);
    expect(planEnvironment({ ...inputs }).tag).toBe(plan.tag);
    expect(planEnvironment({ ...inputs, baseImageId: "sha256:5678" }).tag).not.toBe(plan.tag);
    expect(planEnvironment({ ...inputs, definitionText: "setup: [npm i]\n" }).tag).not.toBe(plan.tag);
    expect(
      planEnvironment({ ...inputs, keyFiles: [{ path: "package-lock.json", sha256: "b" }] }).tag,
    ).not.toBe(plan.tag);
    expect(plan.keyedBy).toContain("package-lock.json");
    // Another repository with the same files gets another image; a commit is keyed by its id.
    expect(
      planEnvironment({ ...inputs, source: "repository fedcba9876543210fedcba9876543210" }).tag,
    ).not.toBe(plan.tag);
    const commit = planEnvironment({ ...inputs, source: `tree ${"a".repeat(40)}` });
    expect(commit.tag).not.toBe(plan.tag);
    expect(commit.keyedBy[0]).toBe(
      `the tree ${"a".repeat(40)} (the commit's files, every object checked against its id)`,
    );
    const images = { ...inputs, dockerfileImageIds: { "python:3.12": "sha256:aa" } };
    expect(planEnvironment(images).tag).not.toBe(plan.tag);
    expect(planEnvironment({ ...images, dockerfileImageIds: { "python:3.12": "sha256:bb" } }).tag).not.toBe(
      planEnvironment(images).tag,
    );
  });

  it("keys an inline definition (an eval task's) by its text, not by the task file line it was written on", () => {
    const text = "setup: [pip install -e .]\n";
    const at = (file: string) => ({
      ...inputs,
      definition: parseDrydockEnvironment(text, file),
      definitionText: text,
      inline: true,
    });
    const first = planEnvironment(at("env.jsonl:1 environment"));
    expect(planEnvironment(at("env.jsonl:2 environment")).tag).toBe(first.tag);
    expect(first.keyedBy).toContain("the inline definition's text");
    // A definition file's path stays in the key: it is what its relative paths mean.
    const fromFile = (file: string) => ({ ...at(file), inline: undefined });
    expect(planEnvironment(fromFile("a/devcontainer.json")).tag).not.toBe(
      planEnvironment(fromFile("b/devcontainer.json")).tag,
    );
  });

  it("keeps each setup command exactly as written, and the runner marks each step so a failure names it", () => {
    const d = parseDrydockEnvironment("setup:\n  - |\n    echo \"a b\" 'c'\n    make\n  - npm ci\n");
    const { dockerfile, files, setupSteps } = environmentDockerfile(d, "base:1", {});
    expect(files["env-build/step-1.sh"]).toBe("echo \"a b\" 'c'\nmake\n");
    expect(files["env-build/step-2.sh"]).toBe("npm ci\n");
    const runner = files["env-build/run.sh"]!;
    expect(runner).toContain("echo 'drydock: setup step 2: setup[2]'");
    expect(runner).toMatch(
      /step-2\.sh <\/dev\/null 2>&1 \|\| \{ rc=\$\?; echo "drydock: setup step 2 failed with exit code \$rc"; exit \$rc; \}/,
    );
    // Setup and prepare run in one instruction, so what setup makes is moved, never copied.
    expect(dockerfile.match(/^RUN .*run\.sh/gm)).toHaveLength(1);
    expect(runner.indexOf("prepare.sh")).toBeGreaterThan(runner.indexOf("step-2.sh"));
    expect(setupSteps[1]?.from.line).toBe(5);
    expect(STEP_MARKER.exec("drydock: setup step 2 failed with exit code 3")?.slice(1)).toEqual(["2", "3"]);
    expect(STEP_MARKER.exec("drydock: setup step 2: setup[2]")?.[2]).toBeUndefined();
  });
});

describe("globMatcher", () => {
  it("matches * within a segment and ** across segments", () => {
    expect(globMatcher("requirements*.txt")("requirements-dev.txt")).toBe(true);
    expect(globMatcher("requirements*.txt")("sub/requirements.txt")).toBe(false);
    expect(globMatcher("**/go.sum")("go.sum")).toBe(true);
    expect(globMatcher("**/go.sum")("a/b/go.sum")).toBe(true);
    expect(globMatcher("src/**")("src/a/b.c")).toBe(true);
    expect(globMatcher("a.b")("axb")).toBe(false);
  });
});
