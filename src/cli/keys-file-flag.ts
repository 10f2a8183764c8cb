/**
 * `--keys-file`: the .env file with provider keys. It was called `--env-file`, which Node 20 reads
 * as its own flag anywhere on the command line (a missing file stops node itself with "node: FILE:
 * not found", exit 9, before drydock runs); the old name still works when the file exists.
 */
import { FlagError } from "../util/errors.js";
import { existingFile } from "./flag-checks.js";

export const KEYS_FILE_HELP = ".env file with provider keys (kept on the host; --env-file is the older name)";

export async function keysFileFlag(
  keysFile: string | undefined,
  envFile: string | undefined,
): Promise<string | undefined> {
  if (keysFile !== undefined && envFile !== undefined && keysFile !== envFile) {
    throw new FlagError(
      "--keys-file",
      `and --env-file name different files (${keysFile}, ${envFile}); give one, --keys-file`,
    );
  }
  const given = keysFile ?? envFile;
  if (given === undefined) return undefined;
  return existingFile(
    given,
    keysFile !== undefined ? "--keys-file" : "--env-file",
    "a .env file with provider keys",
  );
}
