/**
 * What keeps the agent out of a person's shell in its box. Pure: the argv, the environment and the
 * rc prelude; session-shell.ts runs them.
 *
 * The person's shell runs under a uid and a group of its own (PERSON_UID, PERSON_GID), numeric, so
 * a box whose image has no passwd entry for them works the same. The kernel lets a process trace
 * another, read its memory, descriptors or environment, or signal it only when its uid matches, so
 * the agent's uid reaches none of the shell's processes. Its terminal belongs to that uid too:
 * under runc the exec's /dev/pts/N is made the person's (group tty, 0620; the box user is not in
 * group tty) and the rc narrows it to 0600; under gVisor `script` opens the pty as the person, 0600.
 * The shell starts from absolute paths with an empty environment and reads no file the agent can
 * write: no startup file, no ~/.inputrc, only root-owned directories on PATH, and a git directory
 * of the person's whose config drydock wrote (person-shell-git.ts).
 *
 * What the person may do to the agent's files is what "others" may: read what the agent left
 * readable (the workspace is 0644/0755 as git and tar write it), write nothing of the agent's.
 * POSIX ACLs would grant writes under runc, but gVisor's tmpfs refuses them (EOPNOTSUPP), and a
 * group shared with the agent would hand the agent the person's terminal under gVisor (its pty
 * takes the opener's group): so the shell is read-mostly, the same under both runtimes.
 */
import { WORKSPACE } from "../sandbox/box-profile.js";
import { PERSON_GIT_OVERRIDES } from "./person-shell-git.js";

/** The uid of a person's shell: not the box user's (1000), and no user an image is likely to have. */
export const PERSON_UID = 64_999;

/** The group of a person's shell: one the box's users are not in, so the agent never has it. */
export const PERSON_GID = 64_999;

/** The exec's user, numeric: no passwd or group entry is needed. */
export const PERSON_USER = `${PERSON_UID}:${PERSON_GID}`;

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

/**
 * The argv of the person's shell, reading `rcPath`, its git at `gitDir` (none: git finds no
 * repository from /workspace); every program named by an absolute path.
 */
export function personShellArgv(rcPath: string, term: string, gitDir: string | null): string[] {
  const git = PERSON_GIT_OVERRIDES.flatMap(([key, value], i) => [
    `GIT_CONFIG_KEY_${i}=${key}`,
    `GIT_CONFIG_VALUE_${i}=${value}`,
  ]);
  // Without a git directory of the person's, git must not find the agent's by itself.
  const where = gitDir
    ? [`GIT_DIR=${gitDir}`, `GIT_WORK_TREE=${WORKSPACE}`, `GIT_INDEX_FILE=${gitDir}/index`]
    : ["GIT_DIR=/nonexistent"];
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
    "GIT_ATTR_NOSYSTEM=1",
    "GIT_OPTIONAL_LOCKS=0",
    // The agent's replace refs and grafts would make a commit id show other content.
    "GIT_NO_REPLACE_OBJECTS=1",
    "GIT_GRAFT_FILE=/dev/null",
    ...where,
    `GIT_CONFIG_COUNT=${PERSON_GIT_OVERRIDES.length}`,
    ...git,
    "/bin/bash",
    "--noprofile",
    "--rcfile",
    rcPath,
    "-i",
  ];
}

/**
 * Variables that make a program run code that is not its own before it can clear its environment:
 * glibc's list of those the loader drops for a setuid program (unsecvars.h) but the three it reads
 * by their presence alone, none of which runs code (LD_SHOW_AUXV, LD_DYNAMIC_WEAK,
 * LD_USE_LOAD_BIAS: set empty they would be on), bash's startup ones, and tar's options. A box's environment holds the repository's `env` (any identifier, such as
 * LD_PRELOAD naming a library in /workspace, which the agent can rewrite), and the engine hands it
 * to every exec; even `/usr/bin/env -i` is loaded before it clears anything.
 */
const LOADER_AND_SHELL_VARIABLES = [
  "GCONV_PATH",
  "GETCONF_DIR",
  "GLIBC_TUNABLES",
  "HOSTALIASES",
  "LD_AUDIT",
  "LD_DEBUG",
  "LD_DEBUG_OUTPUT",
  "LD_HWCAP_MASK",
  "LD_LIBRARY_PATH",
  "LD_ORIGIN_PATH",
  "LD_PRELOAD",
  "LD_PROFILE",
  "LOCALDOMAIN",
  "LOCPATH",
  "MALLOC_TRACE",
  "NIS_PATH",
  "NLSPATH",
  "RESOLV_HOST_CONF",
  "RES_OPTIONS",
  "TMPDIR",
  "TZDIR",
  "BASH_ENV",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "TAR_OPTIONS",
];

/**
 * Environment for every exec of the person's: what `script` (under gVisor) and the programs that
 * stage the shell read before `/usr/bin/env -i` (see LOADER_AND_SHELL_VARIABLES), emptied.
 */
export const PERSON_EXEC_ENV: Record<string, string> = {
  ...Object.fromEntries(LOADER_AND_SHELL_VARIABLES.map((name) => [name, ""])),
  SHELL: "/bin/bash",
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
    // Defense in depth: no one but the person may write to the terminal (a setgid-tty `wall` in a box
    // that allows new privileges, a box user an image put in group tty).
    '/bin/chmod 0600 -- "$(/usr/bin/tty)" 2>/dev/null',
    "",
  ].join("\n");
}
