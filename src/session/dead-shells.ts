/**
 * A kept box adopted after its server died still runs that server's shells: the persistent shell
 * (`bash ... /dev/stdin`, waiting on a terminal nobody reads) and its stderr holder, and whatever
 * command was in flight. Before the new server starts its own, they are ended: each such shell and
 * everything in its session (a terminal exec is a session of its own), so the in-flight command
 * and its background jobs go too. What the agent started with `setsid` (a server meant to outlive
 * its command) is in another session and stays, as the bash tool's description promises.
 */
import type { Box } from "../sandbox/box.js";
import { PTY_SHELL_ARGV } from "../sandbox/pty-shell.js";
import { STDERR_HOLDER } from "../sandbox/stderr-terminal.js";

/** `$@`: the argv of each shell to end, NUL-joined. Prints how many sessions it ended. */
const END_SHELLS = `
declare -A wanted=()
for a in "$@"; do wanted[$a]=1; done
ended=0
for d in /proc/[0-9]*; do
  p=\${d#/proc/}
  [[ $p == 1 || $p == $$ ]] && continue
  { mapfile -d '' -t argv < "$d/cmdline"; } 2>/dev/null || continue
  (( \${#argv[@]} > 0 )) || continue
  printf -v joined '%s\\x1f' "\${argv[@]}"
  [[ -n \${wanted[$joined]} ]] || continue
  pkill -KILL -s "$p" 2>/dev/null && ended=$((ended + 1))
done
echo "$ended"
`;

const joined = (argv: readonly string[]) => argv.map((a) => `${a}\x1f`).join("");

/** Ends the shells a dead server left in `box` (see above); resolves with how many. */
export async function endDeadShells(box: Box): Promise<number> {
  const result = await box.sh(END_SHELLS, [joined(PTY_SHELL_ARGV), joined(STDERR_HOLDER)], {
    timeoutMs: 10_000,
  });
  return Number.parseInt(result.stdout.toString("utf8").trim(), 10) || 0;
}
