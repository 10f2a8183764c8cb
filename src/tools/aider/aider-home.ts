/**
 * aider's files outside the repository, made ready before a run: a fresh model price cache (else
 * aider tries to download one, and in a box without network that costs time and prints a
 * connection error) and the offline model's metadata file.
 */
import { OFFLINE_MODEL_METADATA } from "../../gateway/index.js";
import type { Box } from "../../sandbox/box.js";
import { CommandExitError } from "../../util/errors.js";
import { AIDER_RUN_DIR } from "./workspace-snapshot.js";

/** Where the offline model's metadata lives in the box; pass it to aiderEnv as modelMetadataFile. */
export const OFFLINE_METADATA_FILE = `${AIDER_RUN_DIR}/offline-model-metadata.json`;

// litellm ships the same price list aider would download; a copy younger than aider's 24-hour
// limit keeps aider from looking.
const PREPARE_HOME = `
set -e
mkdir -p ${AIDER_RUN_DIR}
[ -s "$1" ] || printf '%s' "$2" > "$1"
cache="$HOME/.aider/caches/model_prices_and_context_window.json"
if [ -z "$(find "$cache" -mmin -720 2>/dev/null)" ]; then
  mkdir -p "\${cache%/*}"
  for f in /opt/aider/lib/python3*/site-packages/litellm/model_prices_and_context_window_backup.json; do
    if [ -f "$f" ]; then cp "$f" "$cache"; fi
  done
fi
`;

export async function prepareAiderHome(box: Box, signal?: AbortSignal): Promise<void> {
  const result = await box.sh(PREPARE_HOME, [OFFLINE_METADATA_FILE, JSON.stringify(OFFLINE_MODEL_METADATA)], {
    timeoutMs: 60_000,
    signal,
  });
  if (result.exitCode !== 0) {
    throw new CommandExitError(
      result.exitCode,
      result.stderr.toString("utf8"),
      "preparing aider's files in the box",
    );
  }
}
