/**
 * The text drydock types into the box's shell: the frame around each command, and the script
 * that gives a new shell the state an ended one had before its last command. Pure text, so the
 * bash it relies on can be tested on its own.
 */
import { RS, readyMarker } from "./frame-scanner.js";

export interface FrameOptions {
  /** Marks the frame's end; never shown to the command (it cannot fake its own end). */
  nonce: string;
  /**
   * Names the command: exported to it as DRYDOCK_COMMAND (so its processes can be found wherever
   * they went), written as the first line of the state the frame saves before it, and in the
   * start markers.
   */
  token: string;
  /** The terminal the command's stderr goes to; without one it shares stdout's terminal. */
  stderrPath?: string;
}

export const COMMAND_TOKEN_VARIABLE = "DRYDOCK_COMMAND";
const STATE_HEADER = "#drydock-state";
const FUNCTIONS_HEADER = "#drydock-functions";
const STATE_TRAILER = "#drydock-end";

/** A word bash reads as exactly `text` (single quotes; the text must hold no NUL). */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function octalRs(text: string): string {
  return text.replace(new RegExp(RS, "g"), "\\036");
}

/**
 * The frame's code, given to each new shell once as read-only variables, so a command cannot
 * change or unset it and it costs nothing to type: bash reads a script from a terminal one byte
 * per system call, so every byte typed per command is time.
 *
 * `__drydock_run` reads the command from its stdin (the here-document the frame typed), exports
 * the token, prints the start marker on stdout (named by the public token: forging a start gains
 * nothing) and evaluates the command with stdin from /dev/null and stderr on the second
 * terminal. `__drydock_end` prints the end markers, named by the nonce (set only after the
 * command, so the command never sees it) with the exit status; then sets the terminal raw again
 * in case the command changed it (unless it started no process: lastPid), has `__drydock_save` save the shell's state (variables,
 * functions, aliases; options and the working directory are among the variables) between a header
 * and a trailer naming the command, for the next command to be stopped or to end the shell, and
 * prints the ready marker. Both happen while the caller reads the answer, so they cost the round
 * trip nothing; the next command is typed only after the ready marker, so never into a terminal
 * that is not raw yet. All run at the top level (eval, not a function): declarations stay global.
 *
 * Under `set -e` a failing command ends the shell, as bash does; the frame's own steps do not
 * (`|| builtin :`). Builtins are called through `builtin` (stty through `command`), so a function
 * named eval, printf or read does not break the frame; only one named `builtin` does, and then
 * the command never ends, times out, and the shell it broke is replaced.
 */
/**
 * Sets `name` to the last process id the box's kernel gave out (empty where the kernel does not
 * tell it: gVisor has no ns_last_pid), builtins only. The frame reads it before and after a
 * command: where it did not move, the command started no process (it ran builtins only: cd,
 * export, true), and nothing it ran can have changed the terminal, so the terminal reset (a
 * process of its own, about 1.5 ms) is skipped. A process that was already running (a background
 * job of an earlier command) could still change the terminal meanwhile, as it can between two
 * frames: the frame of the next command that starts a process sets it raw again.
 */
function lastPid(name: string): string {
  return `${name}=; IFS= builtin read -r ${name} 2>/dev/null </proc/sys/kernel/ns_last_pid || builtin :; `;
}

export function frameCode(stateFile?: string): string {
  const start = octalRs(`${RS}DDS%s${RS}`);
  const end = octalRs(`${RS}DDE%s:%d${RS}`);
  const ready = octalRs(readyMarker("%s"));
  const save = stateFile
    ? `{ builtin printf '%s\\n' "${STATE_HEADER} $__drydock_t"; builtin declare -p; ` +
      `builtin printf '%s\\n' '${FUNCTIONS_HEADER}'; builtin declare -f; builtin alias -p; ` +
      `builtin printf '%s\\n' "${STATE_TRAILER} $__drydock_t"; } >| ${shellQuote(stateFile)}-"\${__drydock_t: -1}" 2>/dev/null || builtin :`
    : "builtin :";
  const run =
    `IFS= builtin read -r -d '' __drydock_cmd || builtin :; ${lastPid("__drydock_p")}` +
    `builtin export ${COMMAND_TOKEN_VARIABLE}=$__drydock_t; builtin printf '${start}' "$__drydock_t"; ` +
    `if [[ -n $__drydock_e ]]; then builtin eval "$__drydock_cmd" </dev/null 2>>"$__drydock_e"; ` +
    `else builtin eval "$__drydock_cmd" </dev/null; fi`;
  const end_ =
    `builtin unset __drydock_cmd; builtin printf '${end}' "$__drydock_n" "$__drydock_rc"; ` +
    `if [[ -n $__drydock_e ]]; then builtin printf '${end}' "$__drydock_n" "$__drydock_rc" 2>/dev/null >>"$__drydock_e" || builtin :; fi; ` +
    `${lastPid("__drydock_q")}[[ -n $__drydock_p && $__drydock_p == "$__drydock_q" ]] || command stty raw -echo 2>/dev/null || builtin :; ` +
    `builtin eval "$__drydock_save"; builtin printf '${ready}' "$__drydock_n"; builtin unset __drydock_n`;
  return `builtin readonly __drydock_run=${shellQuote(run)} __drydock_end=${shellQuote(end_)} __drydock_save=${shellQuote(save)}`;
}

/**
 * One command, framed, for a shell that has the frame's code (frameCode): the command travels
 * verbatim in a here-document whose delimiter holds the nonce, so it cannot end early. Redirections
 * of the second terminal are appended: the same text reaches a terminal, and a plain file (in
 * tests) keeps all of it. NUL bytes, which no bash string can hold, are dropped.
 */
export function framed(command: string, o: FrameOptions): string {
  const delimiter = `__DRYDOCK_${o.nonce}__`;
  return (
    `__drydock_t=${o.token} __drydock_e=${o.stderrPath ? shellQuote(o.stderrPath) : ""}; ` +
    `builtin eval "$__drydock_run" <<'${delimiter}'\n${command.replace(/\0/g, "")}\n${delimiter}\n` +
    `__drydock_rc=$? __drydock_n=${o.nonce}; builtin eval "$__drydock_end"\n`
  );
}

/**
 * The first line a new shell is given: a raw, silent terminal (bytes typed reach bash verbatim:
 * no line-length limit, no signal keys, no echo), SIGINT trapped rather than ignored (so the
 * commands bash runs keep the default action), the state directory made, the frame's code
 * given and, with a `stateTag`, the shell's first state saved under it, then the ready marker with the
 * shell's pid and its terminal. Typed while the terminal is still cooked: it stays one line
 * under the terminal's 4096-byte line limit.
 */
export function shellInit(readyMarker: string, stateFile?: string, stateTag?: string): string {
  const dir = stateFile ? stateFile.replace(/\/[^/]*$/, "") || "/" : undefined;
  const save = stateFile && stateTag ? `__drydock_t=${stateTag}; builtin eval "$__drydock_save"; ` : "";
  return (
    `stty raw -echo 2>/dev/null; trap ':' INT; ${dir ? `mkdir -p -m 700 ${shellQuote(dir)} 2>/dev/null; ` : ""}` +
    `${frameCode(stateFile)}; ${save}printf '${octalRs(readyMarker)}%s:%s\\036' $$ "$(tty)"\n`
  );
}

/**
 * Bash's own variables: read-only, computed on every use, or describing the shell that runs.
 * They are not carried from an ended shell to its successor.
 */
const SHELL_OWN_VARIABLES = [
  "BASH",
  "BASHOPTS",
  "BASHPID",
  "BASH_ALIASES",
  "BASH_ARGC",
  "BASH_ARGV",
  "BASH_ARGV0",
  "BASH_CMDS",
  "BASH_COMMAND",
  "BASH_EXECUTION_STRING",
  "BASH_LINENO",
  "BASH_LOADABLES_PATH",
  "BASH_REMATCH",
  "BASH_SOURCE",
  "BASH_SUBSHELL",
  "BASH_VERSINFO",
  "BASH_VERSION",
  "COMP_WORDBREAKS",
  "DIRSTACK",
  "EPOCHREALTIME",
  "EPOCHSECONDS",
  "EUID",
  "FUNCNAME",
  "GROUPS",
  "HISTCMD",
  "HOSTTYPE",
  "LINENO",
  "MACHTYPE",
  "OSTYPE",
  "PIPESTATUS",
  "PPID",
  "RANDOM",
  "SECONDS",
  "SHELLOPTS",
  "SHLVL",
  "SRANDOM",
  "UID",
  "_",
];

/**
 * The file a state named `tag` is saved in: one of two, chosen by the tag's last character, which
 * the caller alternates between 0 and 1. So a command's frame never overwrites the state from
 * before it, even when the command ended unseen (its shell silenced) and is then stopped.
 */
export function stateSlotFile(stateFile: string, tag: string): string {
  return `${stateFile}-${tag.slice(-1)}`;
}

/** A name for a state, in the other slot than `previous` (slot 0 when there is none). */
export function nextStateTag(previous: string | undefined, random: string): string {
  return `${random}${previous?.endsWith("0") ? "1" : "0"}`;
}

/** What restoreState reports after its marker: restored, or why not. */
export type RestoreOutcome = "restored" | "no-state" | "no-directory";

/**
 * Gives the shell it runs the state saved under `token` (after the command it names, or as a shell
 * started): variables (set, changed and unset, with their attributes), functions, aliases, `set -o`
 * and `shopt` options, and the working directory. Nothing happens when the saved state is not that
 * one, or not whole (the file is missing, cut short, or overwritten since). Ends with
 * `marker` followed by the outcome and RS. Runs at the top level of the shell, so declarations
 * are global; options come last, so errexit or nounset cannot cut the restore short.
 */
export function restoreState(stateFile: string, token: string, workdir: string, marker: string): string {
  const file = shellQuote(stateSlotFile(stateFile, token));
  const own = SHELL_OWN_VARIABLES.join("|");
  return [
    `__drydock_r=no-state`,
    `IFS= builtin read -r -d '' __drydock_all < ${file} 2>/dev/null`,
    // A state cut short (its shell stopped while saving it) has no trailer: it is not used.
    `if [[ $__drydock_all == '${STATE_HEADER} ${token}'$'\\n'* && $__drydock_all == *$'\\n''${STATE_TRAILER} ${token}'$'\\n' ]]; then`,
    `  __drydock_vars=() __drydock_names=() __drydock_so= __drydock_bo= __drydock_fns=`,
    `  { IFS= builtin read -r __drydock_l`,
    `    while IFS= builtin read -r __drydock_l && [[ $__drydock_l != '${FUNCTIONS_HEADER}' ]]; do`,
    `      [[ $__drydock_l =~ ^declare\\ -[-a-zA-Z]*\\ ([A-Za-z_][A-Za-z0-9_]*)(=|$) ]] || continue`,
    `      case \${BASH_REMATCH[1]} in`,
    `        SHELLOPTS) __drydock_so=\${__drydock_l#*=} ;;`,
    `        BASHOPTS) __drydock_bo=\${__drydock_l#*=} ;;`,
    `        ${own}|__drydock_*) ;;`,
    `        *) __drydock_vars+=("$__drydock_l"); __drydock_names+=("\${BASH_REMATCH[1]}") ;;`,
    `      esac`,
    `    done`,
    `    IFS= builtin read -r -d '' __drydock_fns`,
    `  } <<< "$__drydock_all"`,
    // Options and unsets are worked out now, while IFS is still this shell's own.
    `  __drydock_so=":\${__drydock_so//\\"/}:" __drydock_bo=":\${__drydock_bo//\\"/}:" __drydock_opts= __drydock_last=`,
    `  for __drydock_l in \${SHELLOPTS//:/ }; do [[ $__drydock_so == *":$__drydock_l:"* ]] || __drydock_opts+="set +o $__drydock_l; "; done`,
    `  for __drydock_l in \${__drydock_so//:/ }; do`,
    `    [[ :$SHELLOPTS: == *":$__drydock_l:"* ]] && continue`,
    `    case $__drydock_l in errexit|nounset) __drydock_last+="set -o $__drydock_l; " ;; *) __drydock_opts+="set -o $__drydock_l; " ;; esac`,
    `  done`,
    `  for __drydock_l in \${BASHOPTS//:/ }; do [[ $__drydock_bo == *":$__drydock_l:"* ]] || __drydock_opts+="shopt -u $__drydock_l; "; done`,
    `  for __drydock_l in \${__drydock_bo//:/ }; do [[ :$BASHOPTS: == *":$__drydock_l:"* ]] || __drydock_opts+="shopt -s $__drydock_l; "; done`,
    `  declare -A __drydock_kept=()`,
    `  for __drydock_l in "\${__drydock_names[@]}"; do __drydock_kept[$__drydock_l]=1; done`,
    `  for __drydock_l in $(builtin compgen -v); do`,
    `    case $__drydock_l in ${own}|__drydock_*) continue ;; esac`,
    `    [[ -n \${__drydock_kept[$__drydock_l]} ]] || builtin unset -v "$__drydock_l" 2>/dev/null`,
    `  done`,
    `  for __drydock_l in "\${__drydock_vars[@]}"; do builtin eval "$__drydock_l"; done 2>/dev/null`,
    `  builtin eval "$__drydock_fns" 2>/dev/null`,
    `  if builtin cd -- "$PWD" 2>/dev/null; then __drydock_r=restored; else builtin cd -- ${shellQuote(workdir)} 2>/dev/null; __drydock_r=no-directory; fi`,
    `  builtin eval "$__drydock_opts $__drydock_last" 2>/dev/null`,
    `fi`,
    `builtin printf '${octalRs(marker)}%s\\036' "$__drydock_r"`,
    `builtin unset __drydock_all __drydock_r __drydock_l __drydock_vars __drydock_names __drydock_so __drydock_bo __drydock_fns __drydock_opts __drydock_last __drydock_kept BASH_REMATCH`,
    "",
  ].join("\n");
}
