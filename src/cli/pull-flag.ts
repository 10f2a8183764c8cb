/**
 * `--pull missing|always|never` (on serve, run, eval and env): when drydock pulls an image from
 * its registry. Only images the operator chose are pulled: ones `--allow-base-image` covers when
 * an environment names them, and eval tasks' `image`.
 */
import { FlagError } from "../util/errors.js";
import { DEFAULT_PULL_MODE, PULL_MODES, type PullMode } from "../environment/image-pulls.js";

export const PULL_HELP =
  "when to pull an image from its registry (credentials from the engine's client configuration, ~/.docker/config.json or DOCKER_CONFIG): missing (pull what the engine lacks), always (pull again at first use), never; only images --allow-base-image covers, and eval tasks' image, are pulled";

export function checkPullFlag(value: string | undefined): PullMode {
  if (value === undefined) return DEFAULT_PULL_MODE;
  if ((PULL_MODES as readonly string[]).includes(value)) return value as PullMode;
  throw new FlagError(
    "--pull",
    `${JSON.stringify(value)} is not a pull mode; give one of ${PULL_MODES.join(", ")}`,
  );
}
