/**
 * `.devcontainer/devcontainer.json` (JSON with comments), read into drydock's environment shape.
 * Pure. What drydock applies: `image` (when the engine has it), `build.dockerfile` / `context` /
 * `args` / `target`, `containerEnv` and `remoteEnv`, and the lifecycle commands that prepare a
 * workspace (`onCreateCommand`, `updateContentCommand`, `postCreateCommand`), run at build time
 * in that order. Everything else is named in `warnings`: drydock's hardening, not the file, decides
 * users, mounts, ports, capabilities and the network.
 */
import { getNodeValue, parseTree, printParseErrorCode, type Node, type ParseError } from "jsonc-parser";
import { posix } from "node:path";
import {
  emptyDefinition,
  ENV_NAME,
  EnvironmentDefinitionError,
  type EnvironmentDefinition,
  type SetupStep,
  type SourceRef,
} from "./environment-definition.js";

const LIFECYCLE = ["onCreateCommand", "updateContentCommand", "postCreateCommand"] as const;

/** Keys with no meaning for a box, ignored without a word. */
const SILENT = new Set([
  "name",
  "customizations",
  "$schema",
  "waitFor",
  "shutdownAction",
  "otherPortsAttributes",
]);

/** Keys drydock does not apply, with what the user should know. */
const NOT_APPLIED: Record<string, string> = {
  features:
    "features are not installed (they come from a registry); install what they add with the Dockerfile or a lifecycle command",
  postStartCommand:
    "postStartCommand is not run (boxes start from a prepared image; put the command in postCreateCommand)",
  postAttachCommand: "postAttachCommand is not run",
  initializeCommand: "initializeCommand is not run (it would run on the host)",
  forwardPorts: "forwardPorts is ignored (boxes have no network)",
  portsAttributes: "portsAttributes is ignored",
  appPort: "appPort is ignored",
  mounts: "mounts are ignored (the host is never mounted into a box)",
  workspaceMount: "workspaceMount is ignored (the repository is copied to /workspace)",
  workspaceFolder: "workspaceFolder is ignored (the repository is at /workspace)",
  runArgs: "runArgs are ignored (drydock's hardening decides how the box runs)",
  privileged: "privileged is ignored (boxes never run privileged)",
  capAdd: "capAdd is ignored (boxes drop every capability)",
  securityOpt: "securityOpt is ignored",
  init: "init is ignored",
  remoteUser: "remoteUser is ignored (boxes run as uid 1000, user agent)",
  containerUser: "containerUser is ignored (boxes run as uid 1000, user agent)",
  updateRemoteUserUID: "updateRemoteUserUID is ignored",
  userEnvProbe: "userEnvProbe is ignored",
  overrideCommand: "overrideCommand is ignored",
  hostRequirements: "hostRequirements are ignored (limits come from drydock's flags)",
};

export function parseDevcontainer(text: string, file: string): EnvironmentDefinition {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const lineAt = (offset: number) => text.slice(0, offset).split("\n").length;
  const at = (node: Node | undefined): SourceRef => ({ file, line: node ? lineAt(node.offset) : 1 });
  const first = errors[0];
  if (first) {
    throw new EnvironmentDefinitionError(
      { file, line: lineAt(first.offset) },
      `not valid JSON with comments (${printParseErrorCode(first.error)})`,
      "fix the syntax",
    );
  }
  if (!root || root.type !== "object") {
    throw new EnvironmentDefinitionError(
      at(root),
      "the file must hold one JSON object",
      "see https://containers.dev/implementors/json_reference/",
    );
  }
  const props = new Map<string, Node>();
  for (const prop of root.children ?? []) {
    const [key, value] = prop.children ?? [];
    if (key && value) props.set(String(key.value), value);
  }
  const dir = posix.dirname(file);
  const definition = emptyDefinition("devcontainer", file);

  if (props.has("dockerComposeFile")) {
    throw new EnvironmentDefinitionError(
      at(props.get("dockerComposeFile")),
      "dockerComposeFile is not supported (a box is one container)",
      "give a build.dockerfile or an image instead, or write .drydock/environment.yaml",
    );
  }
  const image = props.get("image");
  const build = props.get("build");
  const legacyDockerfile = props.get("dockerFile");
  if (build || legacyDockerfile) {
    const b = build ? objectOf(build, "build", at) : new Map<string, Node>();
    const dockerfileNode = b.get("dockerfile") ?? b.get("dockerFile") ?? legacyDockerfile;
    if (!dockerfileNode || dockerfileNode.type !== "string") {
      throw new EnvironmentDefinitionError(
        at(build ?? legacyDockerfile),
        "build needs a dockerfile",
        'add "dockerfile": "Dockerfile" (a path relative to the devcontainer.json)',
      );
    }
    const context = b.get("context") ?? props.get("context");
    const args = b.get("args");
    const target = b.get("target");
    definition.base = {
      kind: "dockerfile",
      dockerfile: inRepo(
        posix.join(dir, String(dockerfileNode.value)),
        at(dockerfileNode),
        "build.dockerfile",
      ),
      context: inRepo(
        posix.join(dir, context && context.type === "string" ? String(context.value) : "."),
        at(context ?? build),
        "build.context",
      ),
      args: args ? stringMap(args, "build.args", at) : {},
      target: target && target.type === "string" ? String(target.value) : undefined,
      from: at(dockerfileNode),
    };
    for (const key of b.keys()) {
      if (!["dockerfile", "dockerFile", "context", "args", "target"].includes(key)) {
        definition.warnings.push(`build.${key} is ignored`);
      }
    }
    if (image) definition.warnings.push("image is ignored: build.dockerfile is used");
  } else if (image) {
    if (image.type !== "string" || String(image.value).trim() === "") {
      throw new EnvironmentDefinitionError(
        at(image),
        "image must be an image name",
        'e.g. "image": "drydock-sandbox:latest"',
      );
    }
    definition.base = { kind: "image", ref: String(image.value), from: at(image) };
  }

  for (const key of ["containerEnv", "remoteEnv"]) {
    const node = props.get(key);
    if (node) Object.assign(definition.env, stringMap(node, key, at));
  }
  for (const key of LIFECYCLE) {
    const node = props.get(key);
    if (node) definition.setup.push(...lifecycleSteps(node, key, at));
  }
  for (const key of props.keys()) {
    if (NOT_APPLIED[key]) definition.warnings.push(NOT_APPLIED[key]);
    else if (
      !SILENT.has(key) &&
      !["image", "build", "dockerFile", "context", "containerEnv", "remoteEnv", ...LIFECYCLE].includes(key)
    ) {
      definition.warnings.push(`${key} is not applied`);
    }
  }
  return definition;
}

type At = (node: Node | undefined) => SourceRef;

function objectOf(node: Node, key: string, at: At): Map<string, Node> {
  if (node.type !== "object")
    throw new EnvironmentDefinitionError(
      at(node),
      `${key} must be an object`,
      "see the devcontainer.json reference",
    );
  const out = new Map<string, Node>();
  for (const prop of node.children ?? []) {
    const [k, v] = prop.children ?? [];
    if (k && v) out.set(String(k.value), v);
  }
  return out;
}

function stringMap(node: Node, key: string, at: At): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of objectOf(node, key, at)) {
    if (!ENV_NAME.test(name) && key !== "build.args") {
      throw new EnvironmentDefinitionError(
        at(value),
        `${key}: "${name}" is not a variable name`,
        "use letters, digits and _",
      );
    }
    if (value.type !== "string" && value.type !== "number" && value.type !== "boolean") {
      throw new EnvironmentDefinitionError(at(value), `${key}.${name} must be a string`, "quote the value");
    }
    if (typeof value.value === "string" && /\$\{[^}]*\}/.test(value.value)) {
      throw new EnvironmentDefinitionError(
        at(value),
        `${key}.${name} uses a variable (${value.value}), which drydock does not substitute`,
        "write the value out in full",
      );
    }
    out[name] = String(value.value);
  }
  return out;
}

/** A lifecycle command: a shell string, an argv array, or an object of named commands (run one after another). */
function lifecycleSteps(node: Node, key: string, at: At): SetupStep[] {
  const one = (value: Node, label: string): SetupStep => {
    const raw: unknown = getNodeValue(value);
    if (typeof raw === "string" && raw.trim() !== "") return { command: raw, from: at(value), label };
    if (Array.isArray(raw) && raw.length > 0 && raw.every((w) => typeof w === "string")) {
      return { command: (raw as string[]).map(shellQuote).join(" "), from: at(value), label };
    }
    throw new EnvironmentDefinitionError(
      at(value),
      `${label} must be a command string or a list of words`,
      'e.g. "pip install -e ."',
    );
  };
  if (node.type === "object") {
    return [...objectOf(node, key, at)].map(([name, value]) => one(value, `${key}.${name}`));
  }
  return [one(node, key)];
}

export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function inRepo(path: string, from: SourceRef, key: string): string {
  const normal = posix.normalize(path);
  if (normal.startsWith("../") || normal === ".." || posix.isAbsolute(normal)) {
    throw new EnvironmentDefinitionError(
      from,
      `${key} points outside the repository (${path})`,
      "keep the Dockerfile and its context inside the repository",
    );
  }
  return normal === "." ? "" : normal.replace(/\/$/, "");
}
