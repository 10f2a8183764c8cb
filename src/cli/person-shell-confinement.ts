/**
 * What keeps the agent out of a person's shell in its box. Pure: the argv, the environment and the
 * rc prelude; session-shell.ts runs them.
 *
 * The person's shell runs as the box user (so it can work on the agent's files) but under a group
 * no process of the agent's has. The kernel lets a process trace another, or read its memory, fds
 * or (under runc) environment, only when both its user and its group match, so the agent cannot
 * reach into the shell to read its nonce or drive it. The rc reaches the shell as a file written by
 * root in the box, readable by that group only (neither an environment variable, which gVisor shows
 * to every process, nor an argument, which /proc shows to everyone). The shell itself starts
 * from absolute paths with an empty environment, and reads no file the agent can write: no
 * startup file, no ~/.inputrc, no git configuration but the repository's own (with the settings
 * that run programs by themselves overridden), and only root-owned directories on PATH.
 */

/** The group of a person's shell: one the box's users are not in, so the agent never has it. */
export const PERSON_GID = 64_999;

/** A home the agent cannot write (it does not exist): tools that read ~/.something find nothing. */
export const PERSON_HOME = "/nonexistent";

/** Where PATH may point: the system's directories, each kept only if root owns it and it and its parents (see prelude). */
const SYSTEM_PATH = [
  "/opt/drydock/bin",
  "/usr/local/sbin",
  "/usr/local/bin",
  "/usr/sbin",
  "/usr/bin",
  "/sbin",
  "/bin",
];

/** Git settings from the repository (written by the agent) that would run a program without being asked. */
const GIT_OVERRIDES: readonly [string, string][] = [
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"],
  ["commit.gpgSign", "false"],
  ["tag.gpgSign", "false"],
];

/**
 * Run as root in the box (no capabilities, the person's group), with the rc on stdin: writes it to
 * a new directory under /tmp that root owns and only the person's group may read (the sticky /tmp
 * keeps the agent from removing or renaming it), and prints the directory.
 */
export const STAGE_RC_SCRIPT = [
  "set -e",
  "umask 027",
  "d=$(/usr/bin/mktemp -d /tmp/.drydock-person.XXXXXXXXXX)",
  '/bin/chmod 0750 "$d"',
  '/bin/cat > "$d/rc"',
  'printf "%s\\n" "$d"',
].join("\n");

/** The argv of the person's shell, reading `rcPath`; every program named by an absolute path. */
export function personShellArgv(rcPath: string, term: string): string[] {
  const git = GIT_OVERRIDES.flatMap(([key, value], i) => [
    `GIT_CONFIG_KEY_${i}=${key}`,
    `GIT_CONFIG_VALUE_${i}=${value}`,
  ]);
  return [
    "/usr/bin/env",
    "-i",
    `TERM=${term}`,
    `HOME=${PERSON_HOME}`,
    "PATH=/usr/bin:/bin",
    "SHELL=/bin/bash",
    "LANG=C.UTF-8",
    "LC_ALL=C.UTF-8",
    "DRYDOCK_ACTOR=person",
    "PAGER=/usr/bin/less",
    "GIT_PAGER=/usr/bin/less",
    "EDITOR=/usr/bin/vi",
    "VISUAL=/usr/bin/vi",
    "GIT_EDITOR=/usr/bin/vi",
    "GIT_SEQUENCE_EDITOR=/usr/bin/vi",
    "LESSHISTFILE=-",
    "GIT_CONFIG_NOSYSTEM=1",
    "GIT_CONFIG_GLOBAL=/dev/null",
    `GIT_CONFIG_COUNT=${GIT_OVERRIDES.length}`,
    ...git,
    "/bin/bash",
    "--noprofile",
    "--rcfile",
    rcPath,
    "-i",
  ];
}

/** Environment for the exec itself: what `script` (under gVisor) reads before the shell starts. */
export const PERSON_EXEC_ENV: Record<string, string> = {
  SHELL: "/bin/bash",
  BASH_ENV: "",
  ENV: "",
};

/**
 * The first lines of the person's rc: PATH is the system directories that root owns and no one
 * else can write (checked with their parents, in the box, as they are now), and readline reads
 * /etc/inputrc only on the same terms.
 */
export function personShellPrelude(): string {
  return [
    "__drydock_trusted() {",
    "  local p=$1 s",
    "  while [[ -n $p ]]; do",
    '    s=$(/usr/bin/stat -L -c "%u %a" -- "$p" 2>/dev/null) || return 1',
    "    [[ ${s%% *} == 0 ]] || return 1",
    "    (( (8#${s##* } & 8#022) == 0 )) || return 1",
    "    p=${p%/*}",
    "  done",
    "}",
    "__drydock_path=",
    `for __drydock_d in ${SYSTEM_PATH.join(" ")}; do`,
    '  __drydock_trusted "$__drydock_d" && __drydock_path+=${__drydock_path:+:}$__drydock_d',
    "done",
    "export PATH=${__drydock_path:-/usr/bin:/bin}",
    "__drydock_trusted /etc/inputrc && export INPUTRC=/etc/inputrc || export INPUTRC=/dev/null",
    "unset -v __drydock_path __drydock_d BASH_ENV ENV PROMPT_COMMAND CDPATH GLOBIGNORE",
    "unset -f __drydock_trusted",
    "",
  ].join("\n");
}
