/**
 * Finds and reads a repository's environment definition: `.drydock/environment.yaml`, else a
 * devcontainer.json, else the default (the sandbox image as it is).
 */
import { parseDevcontainer } from "./devcontainer-file.js";
import { parseDrydockEnvironment } from "./drydock-environment-file.js";
import {
  DEVCONTAINER_FILES,
  DRYDOCK_ENVIRONMENT_FILE,
  EnvironmentDefinitionError,
  defaultDefinition,
  type EnvironmentDefinition,
} from "./environment-definition.js";
import { globMatcher, type KeyFile } from "./environment-plan.js";
import type { RepoFiles } from "./repo-files.js";

export interface LoadedEnvironment {
  definition: EnvironmentDefinition;
  /** The definition file's text ("" for the default). */
  definitionText: string;
  /** For a Dockerfile base: its text. */
  dockerfileText?: string;
  keyFiles: KeyFile[];
  /**
   * Given from outside the repository (an eval task's `environment`): its `file` names where it was
   * written ("tasks.jsonl:3 environment") for messages only, so two tasks with the same definition
   * share one image.
   */
  inline?: boolean;
}

/** A definition given from outside the repository (an eval task's `environment`), in environment.yaml's form. */
export interface DefinitionOverride {
  text: string;
  /** Where it is written, for messages: the task holding it, "tasks.jsonl:3". */
  file: string;
}

export async function loadEnvironment(
  files: RepoFiles,
  override?: DefinitionOverride,
): Promise<LoadedEnvironment> {
  let definition: EnvironmentDefinition | undefined;
  let definitionText = "";
  const own = override ? undefined : await files.read(DRYDOCK_ENVIRONMENT_FILE);
  if (override) {
    definitionText = override.text;
    definition = parseDrydockEnvironment(override.text, override.file, true);
  } else if (own) {
    definitionText = own.toString("utf8");
    definition = parseDrydockEnvironment(definitionText);
  } else {
    for (const file of DEVCONTAINER_FILES) {
      const text = await files.read(file);
      if (!text) continue;
      definitionText = text.toString("utf8");
      definition = parseDevcontainer(definitionText, file);
      break;
    }
  }
  if (!definition) return { definition: defaultDefinition(), definitionText, keyFiles: [] };
  let dockerfileText: string | undefined;
  if (definition.base.kind === "dockerfile") {
    const bytes = await files.read(definition.base.dockerfile);
    if (!bytes) {
      throw new EnvironmentDefinitionError(
        definition.base.from,
        `the Dockerfile ${definition.base.dockerfile} is not in the repository (${files.describe})`,
        "commit it, or fix build.dockerfile (a path relative to the devcontainer.json)",
      );
    }
    dockerfileText = bytes.toString("utf8");
  }
  const all = await files.list();
  const matchers = definition.keyFiles.map(globMatcher);
  const keyFiles: KeyFile[] = [];
  for (const path of all.filter((p) => matchers.some((m) => m(p))).sort()) {
    const digest = await files.keyDigest(path);
    if (digest) keyFiles.push({ path, sha256: digest });
  }
  return { definition, definitionText, dockerfileText, keyFiles, ...(override ? { inline: true } : {}) };
}
