/**
 * `.drydock/environment.yaml`: drydock's own environment definition. Pure: text in, definition
 * out; every error names the file, the line and the fix.
 *
 * ```yaml
 * packages: [libxml2-dev]          # Debian packages, installed as root at build time
 * env: {PYTHONDONTWRITEBYTECODE: "1"}  # set in the build and in every box
 * setup:                           # run in /workspace as the box user, with the network
 *   - pip install -e '.[test]'
 *   - npm ci
 * key_files: [requirements*.txt, package-lock.json]  # their contents key the cache
 * ```
 */
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node } from "yaml";
import {
  DEBIAN_PACKAGE,
  emptyDefinition,
  DRYDOCK_ENVIRONMENT_FILE,
  ENV_NAME,
  EnvironmentDefinitionError,
  type EnvironmentDefinition,
  type SetupStep,
} from "./environment-definition.js";

export const DRYDOCK_ENVIRONMENT_KEYS = ["packages", "env", "setup", "key_files"] as const;

const FIX_DOC = "see `drydock env --help` or docs/environments.md";

/** @param inline the text is an eval task's `environment` and `file` names the task (see SourceRef.inline). */
export function parseDrydockEnvironment(
  text: string,
  file = DRYDOCK_ENVIRONMENT_FILE,
  inline = false,
): EnvironmentDefinition {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const lineOf = (node: Node | null | undefined): number =>
    node?.range ? lines.linePos(node.range[0]).line : 1;
  const at = (node: Node | null | undefined) => ({ file, line: lineOf(node), ...(inline ? { inline } : {}) });

  const first = doc.errors[0];
  if (first) {
    const line = first.linePos?.[0]?.line ?? 1;
    throw new EnvironmentDefinitionError(
      { file, line, ...(inline ? { inline } : {}) },
      `not valid YAML (${first.message.split("\n")[0]})`,
      "fix the syntax",
    );
  }
  const definition = emptyDefinition("drydock", file);
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return definition;
  if (!isMap(root)) {
    throw new EnvironmentDefinitionError(at(root), "the file must be a mapping of keys", FIX_DOC);
  }
  for (const pair of root.items) {
    const keyNode = pair.key as Node;
    const key = isScalar(keyNode) ? String(keyNode.value) : "";
    const value = pair.value as Node | null;
    switch (key) {
      case "packages":
        definition.packages = stringList(value, key, at).map((name, i) => {
          if (!DEBIAN_PACKAGE.test(name)) {
            throw new EnvironmentDefinitionError(
              at(isSeq(value) ? (value.items[i] as Node) : value),
              `packages: "${name}" is not a Debian package name`,
              "use names as `apt-get install` takes them, e.g. libpq-dev or make=4.3-4.1",
            );
          }
          return name;
        });
        break;
      case "env":
        definition.env = envMap(value, at);
        break;
      case "setup": {
        const commands =
          isScalar(value) && typeof value.value === "string" ? [value] : seqItems(value, key, at);
        definition.setup = commands.map((node, i): SetupStep => {
          if (!isScalar(node) || typeof node.value !== "string" || node.value.trim() === "") {
            throw new EnvironmentDefinitionError(
              at(node),
              `setup: item ${i + 1} is not a command`,
              "give each setup command as a non-empty string",
            );
          }
          return { command: node.value, from: at(node), label: `setup[${i + 1}]` };
        });
        break;
      }
      case "key_files":
        definition.keyFiles = stringList(value, key, at);
        for (const [i, glob] of definition.keyFiles.entries()) {
          if (glob.startsWith("/") || glob.split("/").includes("..")) {
            throw new EnvironmentDefinitionError(
              at(isSeq(value) ? (value.items[i] as Node) : value),
              `key_files: "${glob}" is outside the repository`,
              "give paths relative to the repository's top directory",
            );
          }
        }
        break;
      default:
        throw new EnvironmentDefinitionError(
          at(keyNode),
          `unknown key "${key}"`,
          `the keys are ${DRYDOCK_ENVIRONMENT_KEYS.join(", ")}`,
        );
    }
  }
  return definition;
}

type At = (node: Node | null | undefined) => { file: string; line: number };

function seqItems(value: Node | null, key: string, at: At): Node[] {
  if (value === null || (isScalar(value) && value.value === null)) return [];
  if (!isSeq(value)) {
    throw new EnvironmentDefinitionError(
      at(value),
      `${key}: must be a list`,
      `write it as [a, b] or one "- item" a line`,
    );
  }
  return value.items as Node[];
}

function stringList(value: Node | null, key: string, at: At): string[] {
  return seqItems(value, key, at).map((node, i) => {
    if (!isScalar(node) || typeof node.value !== "string" || node.value.trim() === "") {
      throw new EnvironmentDefinitionError(
        at(node),
        `${key}: item ${i + 1} must be a non-empty string`,
        "quote it",
      );
    }
    return node.value.trim();
  });
}

function envMap(value: Node | null, at: At): Record<string, string> {
  if (value === null || (isScalar(value) && value.value === null)) return {};
  if (!isMap(value)) {
    throw new EnvironmentDefinitionError(
      at(value),
      "env: must be a mapping of NAME: value",
      'e.g. env: {CI: "1"}',
    );
  }
  const env: Record<string, string> = {};
  for (const pair of value.items) {
    const keyNode = pair.key as Node;
    const name = isScalar(keyNode) ? String(keyNode.value) : "";
    if (!ENV_NAME.test(name)) {
      throw new EnvironmentDefinitionError(
        at(keyNode),
        `env: "${name}" is not a variable name`,
        "use letters, digits and _, not starting with a digit",
      );
    }
    const v = pair.value as Node | null;
    if (!isScalar(v) || v.value === null || typeof v.value === "object") {
      throw new EnvironmentDefinitionError(
        at(v ?? keyNode),
        `env: ${name} must be a string, number or boolean`,
        "quote the value",
      );
    }
    env[name] = String(v.value);
  }
  return env;
}
