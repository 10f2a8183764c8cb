/**
 * `serve --env-registry REGISTRY[/PATH]`: on a cluster, where repositories' environment images go
 * after a build on the local Docker engine (as `REGISTRY[/PATH]/drydock-env`); boxes name them by
 * digest. Checked as the push checks its target, when the command line is read.
 */
import { pushTarget } from "../engine/image-push.js";
import { InvalidArgumentError } from "../util/errors.js";

export const ENV_REGISTRY_HELP =
  "with --engine kubernetes:…, build repositories' environments on the local Docker engine and push them to REGISTRY[/PATH]/drydock-env, where the nodes pull them by digest (default: a cluster's sessions use --image as it is)";

export function parseEnvRegistry(value: string): string {
  const trimmed = value.replace(/\/+$/, "");
  try {
    pushTarget(`${trimmed}/drydock-env`, "x");
  } catch (error) {
    throw new InvalidArgumentError(
      "--env-registry",
      `${JSON.stringify(value)} is not REGISTRY[/PATH] with a registry host (e.g. 127.0.0.1:5000 or registry.example.com/team): ${(error as Error).message.replace(/^target: /, "")}`,
    );
  }
  if (/[:@]/.test(trimmed.split("/").slice(1).join("/"))) {
    throw new InvalidArgumentError(
      "--env-registry",
      `${JSON.stringify(value)} names a tag or digest; give only REGISTRY[/PATH] (drydock names each image by its environment's hash)`,
    );
  }
  return trimmed;
}
