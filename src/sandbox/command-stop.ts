/**
 * Stops a command as a whole: the shell that runs it (so no further part of its command list can
 * start), every process descended from that shell, and every process carrying the command's
 * token in its environment (which finds what left the shell's tree: `setsid`, double-forked
 * daemons). One script, run in the box as the box user; it answers once nothing of the command is
 * left. Processes that are not the command's (other execs in the box, PID 1) are never signalled.
 */
import { COMMAND_TOKEN_VARIABLE } from "./shell-frame.js";

export interface StopRequest {
  /** The shell running the command (its pid in the box). */
  shellPid: number;
  /** The command's token (the value of DRYDOCK_COMMAND in what it started). */
  token: string;
  /** How long processes that handle SIGINT get to finish before SIGKILL. */
  graceMs: number;
  /**
   * Written to each terminal once the command's processes are gone and before the shell is
   * killed: everything they wrote arrives before it, so the host knows it has all their output.
   */
  flushMarker: string;
  terminals: string[];
}

export interface StopReport {
  /** Processes that got SIGINT (the shell itself is not counted). */
  interrupted: number;
  /** Processes still running after the grace, or started during it, that got SIGKILL. */
  killed: number;
  /** Processes of the command still there at the end (none, unless the kernel holds them). */
  left: number;
}

/**
 * The script: `$1` shell pid, `$2` token, `$3` grace in ms, `$4` flush marker, then terminals.
 * Bash builtins only in the scan (no process per /proc entry); zombies count as gone. The shell
 * is stopped first and killed last, after the flush markers.
 */
export const STOP_SCRIPT = `
shell=$1 token="${COMMAND_TOKEN_VARIABLE}=$2" grace=$3 marker=$4; shift 4
[[ $shell =~ ^[0-9]+$ && $shell -gt 1 ]] || shell=none
declare -A hit=() sent=() state=() kids=() comm=()
self=$$
scan() {
  local d p s rest pp v e
  state=() kids=()
  for d in /proc/[0-9]*; do
    p=\${d#/proc/}
    [[ $p == 1 || $p == "$self" ]] && continue
    { IFS= read -r s < "$d/stat"; } 2>/dev/null || continue
    rest=\${s##*) }
    state[$p]=\${rest%% *}
    comm[$p]=\${s#*(}; comm[$p]=\${comm[$p]%)*}
    rest=\${rest#* }
    pp=\${rest%% *}
    kids[$pp]+=" $p"
    [[ -n \${hit[$p]} ]] && continue
    if mapfile -d '' -t e < "$d/environ" 2>/dev/null; then
      for v in "\${e[@]}"; do [[ $v == "$token" ]] && { hit[$p]=1; break; }; done
    fi
  done
  local queue=("$shell" "\${!hit[@]}") q c
  local -A seen=()
  while ((\${#queue[@]})); do
    q=\${queue[-1]}; unset 'queue[-1]'
    [[ -n \${seen[$q]} ]] && continue
    seen[$q]=1
    for c in \${kids[$q]}; do hit[$c]=1; queue+=("$c"); done
  done
}
alive() {
  local p
  running=()
  for p in "\${!hit[@]}"; do
    [[ $p == "$shell" ]] && continue
    case \${state[$p]} in ''|Z|X|x) ;; *) running+=("$p") ;; esac
  done
}
handles_int() {
  local k v
  while read -r k v; do
    [[ $k == SigIgn: ]] && { (( (16#$v & 2) == 0 )); return; }
  done < "/proc/$1/status" 2>/dev/null
  return 1
}
nap() { read -r -t "$1" <> <(:) 2>/dev/null || true; }
scan
[[ $shell != none ]] && kill -STOP "$shell" 2>/dev/null
alive
# Shells are stopped, not interrupted: what a shell does next is the rest of a command list.
interrupt=() interrupted=0
for p in "\${running[@]}"; do
  case \${comm[$p]} in
    bash|sh|dash|ash|zsh|ksh|mksh|busybox|fish|csh|tcsh) kill -STOP "$p" 2>/dev/null ;;
    *) interrupt+=("$p") ;;
  esac
done
interrupted=\${#interrupt[@]}
((interrupted)) && kill -INT "\${interrupt[@]}" 2>/dev/null
deadline=$(( \${EPOCHREALTIME/./} + grace * 1000 ))
while ((interrupted)) && (( \${EPOCHREALTIME/./} < deadline )); do
  scan; alive
  busy=0
  for p in "\${running[@]}"; do
    [[ \${state[$p]} == [Tt] ]] && continue
    handles_int "$p" && { busy=1; break; }
  done
  ((busy)) || break
  nap 0.025
done
killed=0
for ((round = 0; round < 400; round++)); do
  scan; alive
  ((\${#running[@]})) || break
  kill -STOP "\${running[@]}" 2>/dev/null
  scan; alive
  for p in "\${running[@]}"; do [[ -n \${sent[$p]} ]] || { sent[$p]=1; ((killed++)); }; done
  kill -KILL "\${running[@]}" 2>/dev/null
  nap 0.01
done
for t in "$@"; do printf '%s' "$marker" 2>/dev/null >>"$t"; done
[[ $shell != none ]] && kill -KILL "$shell" 2>/dev/null
for ((round = 0; round < 200; round++)); do
  scan; alive
  ((\${#running[@]})) || [[ -e /proc/$shell && \${state[$shell]} != Z ]] || break
  ((\${#running[@]})) && kill -KILL "\${running[@]}" 2>/dev/null
  nap 0.01
done
left=\${#running[@]}
[[ -e /proc/$shell && \${state[$shell]} != Z ]] && ((left++))
printf 'stopped %d %d %d\n' "$interrupted" "$killed" "$left"
`;

/** The script's last line, as numbers; undefined when it did not finish. */
export function parseStopReport(stdout: string): StopReport | undefined {
  const match = /^stopped (\d+) (\d+) (\d+)$/m.exec(stdout);
  if (!match) return undefined;
  return { interrupted: Number(match[1]), killed: Number(match[2]), left: Number(match[3]) };
}

/** The script's arguments for a request. */
export function stopArguments(request: StopRequest): string[] {
  return [
    String(request.shellPid),
    request.token,
    String(request.graceMs),
    request.flushMarker,
    ...request.terminals,
  ];
}
