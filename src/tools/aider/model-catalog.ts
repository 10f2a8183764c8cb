/**
 * aider's own list of chat models (what `aider --list-models` searches), read once per sandbox
 * image by importing aider in a box, plus the offline model. Filtering is pure.
 */
import { OFFLINE_AIDER_MODEL } from "../../gateway/index.js";
import type { Box } from "../../sandbox/box.js";
import { CommandExitError } from "../../util/errors.js";

// The same sources as `aider --list-models`: litellm's model table and aider's own metadata.
const LIST_MODELS = `
import importlib.resources, json
from aider import models
models.register_litellm_models([str(importlib.resources.files("aider.resources").joinpath("model-metadata.json"))])
print(json.dumps(models.fuzzy_match_models("")))
`;

export class ModelCatalog {
  private readonly byImage = new Map<string, Promise<string[]>>();

  /** Every model name aider knows, sorted; read in `box` the first time its image is asked about. */
  models(box: Box, signal?: AbortSignal): Promise<string[]> {
    let pending = this.byImage.get(box.image);
    if (!pending) {
      pending = readModels(box, signal);
      this.byImage.set(box.image, pending);
      pending.catch(() => this.byImage.delete(box.image));
    }
    return pending;
  }
}

async function readModels(box: Box, signal?: AbortSignal): Promise<string[]> {
  // Run outside /workspace: nothing here should touch the repository.
  const result = await box.exec(["/opt/aider/bin/python", "-c", LIST_MODELS], {
    workdir: "/tmp",
    env: { LITELLM_LOCAL_MODEL_COST_MAP: "True" },
    timeoutMs: 120_000,
    signal,
  });
  if (result.exitCode !== 0) {
    throw new CommandExitError(
      result.exitCode,
      result.stderr.toString("utf8"),
      "reading aider's model list in the box",
    );
  }
  const lastLine = result.stdout.toString("utf8").trim().split("\n").pop() ?? "[]";
  const names = JSON.parse(lastLine) as unknown;
  if (!Array.isArray(names) || !names.every((name) => typeof name === "string")) {
    throw new Error("aider's model list in the box is not a list of names");
  }
  return [...new Set([...names, OFFLINE_AIDER_MODEL])].sort();
}

/** Models whose name contains `substring`, ignoring case; all of them for an empty substring. */
export function filterModels(models: readonly string[], substring = ""): string[] {
  const needle = substring.trim().toLowerCase();
  return models.filter((model) => model.toLowerCase().includes(needle));
}
