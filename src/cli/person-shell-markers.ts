/**
 * How a person's shell in a box reports each command it ran without any write path to the host:
 * before each prompt, bash prints an escape sequence (an OSC a terminal ignores) to its own
 * terminal, carrying a nonce only this shell knows, the exit status and the command line. The
 * relay on the host takes these out of what the person sees and logs them. Pure.
 */

import { personShellPrelude } from "./person-shell-confinement.js";

/** The OSC number the markers use (unassigned by terminals, so one that slips through shows nothing). */
const OSC = "\x1b]7337;";
const BEL = "\x07";
/** A marker never grows past this; a longer "marker" is passed through as output. */
const MAX_MARKER_CHARS = 256 * 1024;

export interface PersonCommand {
  command: string;
  exitCode: number;
}

/**
 * The rc file of a person's shell: the confinement prelude (PATH, readline; see
 * person-shell-confinement.ts), a prompt that says whose shell it is, and the report before each
 * prompt. It sources nothing the agent could have written (the box user's ~/.bashrc is the agent's
 * to change), so no code of the agent's runs in the shell by itself or sees the nonce, which lives
 * in a shell variable that is not exported: the programs the person runs (some written by the
 * agent) cannot read it from their environment.
 */
export function personShellRc(nonce: string): string {
  if (!/^[0-9a-f]{16,64}$/.test(nonce)) throw new Error("the nonce must be 16 to 64 hex digits");
  return [
    personShellPrelude(),
    "unset HISTFILE",
    `__drydock_nonce=${nonce}`,
    "__drydock_last=$(HISTTIMEFORMAT= builtin history 1 | /bin/sed -E 's/^ *([0-9]+).*/\\1/')",
    "__drydock_report() {",
    "  local s=$? h",
    "  h=$(HISTTIMEFORMAT= builtin history 1)",
    "  [[ $h =~ ^[[:space:]]*([0-9]+)[*]?[[:space:]]+(.*)$ ]] || return 0",
    '  [[ ${BASH_REMATCH[1]} == "$__drydock_last" ]] && return 0',
    "  __drydock_last=${BASH_REMATCH[1]}",
    `  printf '\\033]7337;%s;%s;%s\\007' "$__drydock_nonce" "$s" "$(printf %s "\${BASH_REMATCH[2]}" | /usr/bin/base64 -w0)"`,
    "}",
    "PROMPT_COMMAND=__drydock_report",
    "PS1='(drydock person) \\w \\$ '",
    "",
  ].join("\n");
}

/** Takes the markers of one shell (by its nonce) out of its terminal output, across chunks. */
export class PersonShellMarkers {
  private carry = "";

  constructor(private readonly nonce: string) {}

  /** The output to show, and the commands reported in it. */
  push(chunk: string): { output: string; commands: PersonCommand[] } {
    let data = this.carry + chunk;
    this.carry = "";
    let output = "";
    const commands: PersonCommand[] = [];
    for (;;) {
      const start = data.indexOf(OSC);
      if (start < 0) {
        const hold = partialPrefix(data, OSC);
        output += data.slice(0, data.length - hold);
        this.carry = data.slice(data.length - hold);
        break;
      }
      output += data.slice(0, start);
      const end = data.indexOf(BEL, start + OSC.length);
      if (end < 0) {
        if (data.length - start > MAX_MARKER_CHARS) {
          output += data.slice(start);
        } else {
          this.carry = data.slice(start);
        }
        break;
      }
      const parsed = this.parse(data.slice(start + OSC.length, end));
      // Someone else's marker (a file the agent wrote, printed by cat) is shown as it is: it
      // cannot know this shell's nonce, so it is logged as nothing.
      if (parsed) commands.push(parsed);
      else output += data.slice(start, end + 1);
      data = data.slice(end + 1);
    }
    return { output, commands };
  }

  /** Whatever was held back, at the end of the stream. */
  flush(): string {
    const rest = this.carry;
    this.carry = "";
    return rest;
  }

  private parse(body: string): PersonCommand | undefined {
    const [nonce, status, encoded, ...extra] = body.split(";");
    if (nonce !== this.nonce || extra.length > 0 || status === undefined || encoded === undefined)
      return undefined;
    if (!/^\d{1,3}$/.test(status) || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return undefined;
    return { command: Buffer.from(encoded, "base64").toString("utf8"), exitCode: Number(status) };
  }
}

/** How many characters at the end of `text` could begin `marker`. */
function partialPrefix(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(marker.slice(0, n))) return n;
  }
  return 0;
}
