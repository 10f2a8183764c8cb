import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { DrydockError } from "./errors.js";

/**
 * The docker CLI that building the base image without a registry runs (`docker import`):
 * DRYDOCK_DOCKER_CLI, else docker or podman on PATH.
 */
export function findDockerCli(): string {
  if (process.env.DRYDOCK_DOCKER_CLI) return process.env.DRYDOCK_DOCKER_CLI;
  for (const name of ["docker", "podman"]) {
    for (const dir of (process.env.PATH ?? "").split(delimiter)) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // Not here.
      }
    }
  }
  throw new DrydockError(
    "docker_cli_missing",
    "the docker CLI was not found on PATH (building the base image runs `docker import`); install it (Debian: apt-get install docker.io) or set DRYDOCK_DOCKER_CLI",
  );
}
