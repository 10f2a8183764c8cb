/**
 * How a person's shell in a box says a command ended, without any write path to the host: before
 * each prompt, bash prints an escape sequence (an OSC a terminal ignores) to its own terminal,
 * carrying a nonce and the exit status. The relay on the host takes these out of what the person
 * sees. It is the box's word: what the person ran is logged from what the host saw them type
 * (person-shell-typed.ts), and a report only adds the status the box gave, labelled as such.
 * The nonce keeps reports of other text (a file the agent wrote, shown by `cat`) from passing
 * for the shell's; a program the person runs from the workspace could learn it, and then claim
 * only an exit status. Pure.
 */

import { personShellPrelude } from "./person-shell-confinement.js";

/** The OSC number the markers use (unassigned by terminals, so one that slips through shows nothing). */
const OSC = "\x1b]7337;";
const BEL = "\x07";
/** A marker never grows past this; a longer "marker" is passed through as output. */
const MAX_MARKER_CHARS = 256 * 1024;

/** A report of the shell's: the status of the command before its prompt (the box's word). */
export interface PromptReport {
  exitCode: number;
}

/**
 * The rc file of a person's shell: the confinement prelude (PATH, readline; see
 * person-shell-confinement.ts), a prompt that says whose shell it is, and the report before each
 * prompt. It sources nothing the agent could have written (the box user's ~/.bashrc is the agent's
 * to change), so no code of the agent's runs in the shell by itself; the nonce lives in a shell
 * variable that is not exported.
 */
export function personShellRc(nonce: string): string {
  if (!/^[0-9a-f]{16,64}$/.test(nonce)) throw new Error("the nonce must be 16 to 64 hex digits");
  return [
    personShellPrelude(),
    "unset HISTFILE",
    `__drydock_nonce=${nonce}`,
    `__drydock_report() { builtin printf '\\033]7337;%s;%s\\007' "$__drydock_nonce" "$?"; }`,
    "PROMPT_COMMAND=__drydock_report",
    "PS1='(drydock person) \\w \\$ '",
    "",
  ].join("\n");
}

/** Takes the reports of one shell (by its nonce) out of its terminal output, across chunks. */
export class PersonShellMarkers {
  private carry = "";

  constructor(private readonly nonce: string) {}

  /** The output to show, and the reports in it. */
  push(chunk: string): { output: string; reports: PromptReport[] } {
    let data = this.carry + chunk;
    this.carry = "";
    let output = "";
    const reports: PromptReport[] = [];
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
      // Someone else's marker (a file the agent wrote, printed by cat) is shown as it is.
      if (parsed) reports.push(parsed);
      else output += data.slice(start, end + 1);
      data = data.slice(end + 1);
    }
    return { output, reports };
  }

  /** Whatever was held back, at the end of the stream. */
  flush(): string {
    const rest = this.carry;
    this.carry = "";
    return rest;
  }

  private parse(body: string): PromptReport | undefined {
    const [nonce, status, ...extra] = body.split(";");
    if (nonce !== this.nonce || extra.length > 0 || status === undefined) return undefined;
    if (!/^\d{1,3}$/.test(status)) return undefined;
    return { exitCode: Number(status) };
  }
}

/** How many characters at the end of `text` could begin `marker`. */
function partialPrefix(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(marker.slice(0, n))) return n;
  }
  return 0;
}
