"""Shell the client runs in a box through the ``bash`` tool, for what no tool does as it is:
exact bytes of a file (base64 both ways), argv with stdin, cwd and environment, and files
bigger than one request.

Every script runs as ``bash -c SCRIPT drydock ARGS`` inside a subshell with errexit off, so the
persistent shell's own options neither end it nor change what is reported; its exit status comes
after its output on a line of its own.
"""

from __future__ import annotations

import base64
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence

WORKSPACE = "/workspace"

# Exit statuses of the scripts' refusals (errno values where one fits).
EXIT_MISSING = 2
EXIT_OUTSIDE = 3
EXIT_DENIED = 13
EXIT_DIRECTORY = 21
EXIT_SPECIAL = 22

# $1 path, $2 confine (1: must stay in /workspace), resolved with links followed.
_RESOLVE = r"""
p=$(realpath -m -- "$1") || exit 22
if [ "$2" = 1 ]; then
  case "$p" in /workspace|/workspace/*) ;; *) exit 3 ;; esac
fi
"""

# $1 path, $2 confine, $3 offset, $4 count: the size on a line, then those bytes base64-encoded.
READ_SCRIPT = (
    _RESOLVE
    + r"""
[ -e "$p" ] || exit 2
[ -d "$p" ] && exit 21
[ -f "$p" ] || exit 22
[ -r "$p" ] || exit 13
stat -c %s -- "$p"
tail -c +$(($3 + 1)) -- "$p" | head -c "$4" | base64 -w0
"""
)

# $1 temp file: appends base64 read on stdin, decoded.
APPEND_SCRIPT = r"""
base64 -d >> "$1" || exit 22
"""

# $1 path, $2 confine, $3 temp file: moves the uploaded bytes into place (mode of an existing
# file kept, parent directories made).
PLACE_SCRIPT = (
    _RESOLVE
    + r"""
t=$3
[ -d "$p" ] && { rm -f -- "$t"; exit 21; }
d=$(dirname -- "$p")
if [ -e "$d" ] && [ ! -d "$d" ]; then rm -f -- "$t"; exit 22; fi
mkdir -p -- "$d" 2>/dev/null || { rm -f -- "$t"; exit 13; }
if [ -e "$p" ]; then
  [ -w "$p" ] || { rm -f -- "$t"; exit 13; }
  cat -- "$t" > "$p" 2>/dev/null || { rm -f -- "$t"; exit 13; }
  rm -f -- "$t"
else
  mv -f -- "$t" "$p" 2>/dev/null || { cat -- "$t" > "$p" 2>/dev/null && rm -f -- "$t"; } || { rm -f -- "$t"; exit 13; }
fi
exit 0
"""
)

STATUS_RE = re.compile(r"\n(\d+)\n?$")


def script_command(script: str, args: Sequence[str], stdin_b64: str | None = None) -> str:
    """The line the bash tool runs for one script; its status follows its output."""
    argv = " ".join(shlex.quote(a) for a in ["drydock", *args])
    status = "printf '\\n%s\\n' \"$?\""
    if stdin_b64 is None:
        return f"( set +e; command bash -c {shlex.quote(script)} {argv}; {status} )"
    # The data as a here-document: its lines follow the command's line.
    return (
        f"( set +e; command bash -c {shlex.quote(script)} {argv} <<'DRYDOCK_DATA_EOF'; {status}\n"
        f"{stdin_b64}\nDRYDOCK_DATA_EOF\n)"
    )


def parse_script_output(stdout: str) -> tuple[str, int] | None:
    """The script's output and exit status from the bash tool's stdout."""
    text = stdout.replace("\r", "")
    match = STATUS_RE.search(text)
    if match is None:
        return None
    return text[: match.start()], int(match.group(1))


def workspace_path(path: str, base: str = WORKSPACE) -> str:
    """An absolute path in the box: relative paths are taken from ``base``."""
    if not path:
        raise ValueError("path is empty")
    joined = path if path.startswith("/") else posixpath.join(base, path)
    return posixpath.normpath(joined) if not joined.startswith("//") else "/" + joined.lstrip("/")


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def exec_command(
    argv: Sequence[str] | str,
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin_b64: str | None = None,
    stdin_file: str | None = None,
    tty: bool = True,
) -> str:
    """The command line for one run: argv (exec'd, each word quoted) or a shell string.

    Without cwd, env, stdin and with a terminal, a shell string runs as it is in the session's
    persistent shell (its cd and variables persist). Anything else runs in a subshell, so nothing
    of it outlives the call: ``cd`` to ``cwd``, the variables exported, stdin from the data, and
    with ``tty=False`` stdout and stderr are files (not terminals), sent on once it ended.
    """
    if isinstance(argv, str):
        body = argv
        plain = True
    else:
        if not argv:
            raise ValueError("argv is empty")
        body = "exec " + " ".join(shlex.quote(a) for a in argv)
        plain = False
    if plain and cwd is None and not env and stdin_b64 is None and stdin_file is None and tty:
        return body
    pre = ""
    if cwd is not None:
        pre += f"cd -- {shlex.quote(cwd)} || exit 1\n"
    for key, value in (env or {}).items():
        if not _ENV_NAME.match(key):
            raise ValueError(f"{key!r} is not an environment variable name")
        pre += f"export {key}={shlex.quote(value)}\n"
    inner = f"(\n{pre}{body}\n)"
    if stdin_file is not None:
        inner += f" < {shlex.quote(stdin_file)}"
    elif stdin_b64 is not None:
        inner = f"printf %s {shlex.quote(stdin_b64)} | base64 -d | {inner}"
    else:
        inner += " < /dev/null"
    if tty:
        return inner
    # Output into files, then onto the terminal once the command ended.
    return (
        "( o=$(mktemp) && e=$(mktemp) || exit 125\n"
        f"{inner} > \"$o\" 2> \"$e\"\n"
        "rc=$?\n"
        'command cat -- "$o"; command cat -- "$e" >&2; command rm -f -- "$o" "$e"\n'
        "exit $rc )"
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
