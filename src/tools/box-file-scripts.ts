/**
 * The bash scripts behind `box-files`, one per operation. Each takes the path as "$1" (never
 * interpolated), checks it in the box and then acts, so a check and its use are one exec. Replies
 * start with NUL-terminated header fields; refusals are the exit codes in EXIT, detail on stderr.
 * The scripts are files (tools/box-files/*.sh, checked by shellcheck), put together here.
 */
import { boxScript } from "../util/box-script.js";

/** Exit codes the scripts use to say why they refused; any other code is an unexpected failure. */
export const EXIT = {
  UNRESOLVABLE: 90,
  OUTSIDE: 91,
  MISSING: 92,
  DIRECTORY: 93,
  SPECIAL: 94,
  UNREADABLE: 95,
  NO_PARENT: 96,
  NOT_DIRECTORY: 97,
} as const;

/** The script in tools/box-files/<name>.sh, with the exit codes it names filled in. */
function script(name: string, codes: (keyof typeof EXIT)[] = []): string {
  return boxScript(`tools/box-files/${name}.sh`, Object.fromEntries(codes.map((code) => [code, EXIT[code]])));
}

/** Resolves "$1" into $p, symlinks followed in the box, and refuses a real path outside /workspace. */
export const RESOLVE = script("resolve", ["UNRESOLVABLE", "OUTSIDE"]);

/** Requires $p to be a readable regular file. */
const REQUIRE_FILE = script("require-file", ["MISSING", "DIRECTORY", "SPECIAL", "UNREADABLE"]);

export const READ_SCRIPT = RESOLVE + REQUIRE_FILE + script("read");

export const LINES_SCRIPT = RESOLVE + REQUIRE_FILE + script("lines");

export const STAT_SCRIPT = RESOLVE + script("stat");

// Writes through a temporary file in the same directory and renames it into place, so a failed
// write leaves the old content whole; an existing file keeps its mode.
export const WRITE_SCRIPT = RESOLVE + script("write", ["DIRECTORY", "SPECIAL", "NO_PARENT"]);

export const REMOVE_SCRIPT = RESOLVE + REQUIRE_FILE + script("remove");

// For each path: status, real path and byte count, NUL-terminated, then that many bytes. A copy
// is taken first so the count is exact even if the file changes meanwhile.
export const READ_MANY_SCRIPT = script("read-many");

export const LIST_SCRIPT = RESOLVE + script("list", ["MISSING", "NOT_DIRECTORY"]);
