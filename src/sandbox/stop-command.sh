#!/usr/bin/env bash
# Stops a command as a whole (src/sandbox/command-stop.ts says how): $1 the shell's pid, $2 the
# command's token, $3 the grace in ms, $4 the flush marker, then the terminals. Prints
# "stopped <interrupted> <killed> <left>". Sent as `bash -c` from the line after this header.
# (a= b= sets each to empty, on purpose)
# shellcheck disable=SC1007

shell=$1 token="@@COMMAND_TOKEN_VARIABLE@@=$2" grace=$3 marker=$4; shift 4
[[ $shell =~ ^[0-9]+$ && $shell -gt 1 ]] || shell=none
declare -A hit=() sent=() state=() kids=() comm=()
self=$$
scan() {
  local d p s rest pp v e
  state=() kids=()
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [[ $p == 1 || $p == "$self" ]] && continue
    { IFS= read -r s < "$d/stat"; } 2>/dev/null || continue
    rest=${s##*) }
    state[$p]=${rest%% *}
    comm[$p]=${s#*(}; comm[$p]=${comm[$p]%)*}
    rest=${rest#* }
    pp=${rest%% *}
    kids[$pp]+=" $p"
    [[ -n ${hit[$p]} ]] && continue
    if mapfile -d '' -t e < "$d/environ" 2>/dev/null; then
      for v in "${e[@]}"; do [[ $v == "$token" ]] && { hit[$p]=1; break; }; done
    fi
  done
  local queue=("$shell" "${!hit[@]}") q c
  local -A seen=()
  while ((${#queue[@]})); do
    q=${queue[-1]}; unset 'queue[-1]'
    [[ -n ${seen[$q]} ]] && continue
    seen[$q]=1
    for c in ${kids[$q]}; do hit[$c]=1; queue+=("$c"); done
  done
}
alive() {
  local p
  running=()
  for p in "${!hit[@]}"; do
    [[ $p == "$shell" ]] && continue
    case ${state[$p]} in ''|Z|X|x) ;; *) running+=("$p") ;; esac
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
for p in "${running[@]}"; do
  case ${comm[$p]} in
    bash|sh|dash|ash|zsh|ksh|mksh|busybox|fish|csh|tcsh) kill -STOP "$p" 2>/dev/null ;;
    *) interrupt+=("$p") ;;
  esac
done
interrupted=${#interrupt[@]}
((interrupted)) && kill -INT "${interrupt[@]}" 2>/dev/null
deadline=$(( ${EPOCHREALTIME/./} + grace * 1000 ))
while ((interrupted)) && (( ${EPOCHREALTIME/./} < deadline )); do
  scan; alive
  busy=0
  for p in "${running[@]}"; do
    [[ ${state[$p]} == [Tt] ]] && continue
    handles_int "$p" && { busy=1; break; }
  done
  ((busy)) || break
  nap 0.025
done
killed=0
for ((round = 0; round < 400; round++)); do
  scan; alive
  ((${#running[@]})) || break
  kill -STOP "${running[@]}" 2>/dev/null
  scan; alive
  for p in "${running[@]}"; do [[ -n ${sent[$p]} ]] || { sent[$p]=1; ((killed++)); }; done
  kill -KILL "${running[@]}" 2>/dev/null
  nap 0.01
done
for t in "$@"; do printf '%s' "$marker" 2>/dev/null >>"$t"; done
[[ $shell != none ]] && kill -KILL "$shell" 2>/dev/null
for ((round = 0; round < 200; round++)); do
  scan; alive
  ((${#running[@]})) || [[ -e /proc/$shell && ${state[$shell]} != Z ]] || break
  ((${#running[@]})) && kill -KILL "${running[@]}" 2>/dev/null
  nap 0.01
done
left=${#running[@]}
[[ -e /proc/$shell && ${state[$shell]} != Z ]] && ((left++))
printf 'stopped %d %d %d
' "$interrupted" "$killed" "$left"
