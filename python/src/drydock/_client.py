"""The async client: ``AsyncDrydock`` (a server, started for you or reached by URL) and
``AsyncSandbox`` (one session: a box holding a copy of a repository)."""

from __future__ import annotations

import asyncio
import base64
import io
import os
import re
import secrets
import shlex
import tarfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import _box_scripts as bs
from ._connection import Connection
from ._local import LocalServer
from ._types import AppliedChanges, Checkpoint, CommandResult, Diff, RestoredCheckpoint, SessionInfo
from .errors import (
    BoxGoneError,
    DrydockError,
    InvalidArgumentError,
    IsDirectoryError,
    LimitExceededError,
    NotFoundError,
    PathOutsideWorkspaceError,
    PermissionDeniedError,
    SessionNotFoundError,
)

# How long past a command's own limit the server may take to answer (stop, restart, reply).
REPLY_GRACE_S = 60.0
# Calls that run no command of the caller's: diffs, applies, checkpoints, removal.
TOOL_TIMEOUT_S = 300.0
# The longest limit a command may have (the bash tool's maximum).
MAX_TIMEOUT_S = 86_400
# Bytes of a file per request: base64 of it stays well under the server's 4 MiB body limit.
WRITE_CHUNK = 2 * 1024 * 1024
# Bytes of a file per reply, when the server lets a call keep 4 MiB of output.
READ_CHUNK = 3 * 1024 * 1024 - 3 * 1024
# Stdin sent inline in the command line up to this size; larger goes through a file first.
INLINE_STDIN = 256 * 1024


def _session_info(reply: dict[str, Any]) -> SessionInfo:
    return SessionInfo(
        id=str(reply["session_id"]),
        repo=str(reply.get("repo", "")),
        base_commit=str(reply.get("base_commit", "")),
        image=str(reply.get("image", "")),
        box=str(reply.get("box", "")),
        created_at=str(reply.get("created_at", "")),
        limits=dict(reply.get("limits") or {}),
        egress=dict(reply.get("egress") or {}),
    )


def _checkpoint(reply: dict[str, Any]) -> Checkpoint:
    return Checkpoint(
        name=str(reply["name"]),
        created_at=str(reply.get("created_at", "")),
        age_s=float(reply.get("age_s", 0)),
        bytes=int(reply.get("bytes", 0)),
        changed_files=int(reply.get("changed_files", 0)),
        include_ignored=bool(reply.get("include_ignored", False)),
        message=reply.get("message") if isinstance(reply.get("message"), str) else None,
        cwd=reply.get("cwd") if isinstance(reply.get("cwd"), str) else None,
    )


class AsyncDrydock:
    """A drydock server and this client's MCP session with it.

    ``await AsyncDrydock.local()`` starts ``drydock serve --http`` on a free loopback port (a
    fresh state directory unless you name one) and stops it on ``close()``;
    ``AsyncDrydock.connect(url, token)`` reaches a running one. Sandboxes are made with
    ``create()``; ``close()`` closes every one still open (the server removes their boxes).
    """

    def __init__(self, url: str, token: str | None, *, server: LocalServer | None = None, **local: Any) -> None:
        if not re.match(r"^https?://", url or ""):
            raise InvalidArgumentError(f"url: {url!r} is not an http(s) URL; pass the URL `drydock serve --http` prints", field="url")
        self.url = url
        self._token = token
        self._server = server
        self._local = local
        self._extra_servers: dict[str, AsyncDrydock] = {}
        self._conn: Connection | None = None
        # The most of each stream one call may keep, once the server said (its --max-output-bytes).
        self._output_cap: int | None = None
        self._conn_lock: asyncio.Lock | None = None
        self._sandboxes: set[AsyncSandbox] = set()
        self._closed = False

    def __repr__(self) -> str:
        kind = "local" if self._server is not None else "remote"
        return f"AsyncDrydock({kind}, url={self.url!r})"

    @property
    def sandboxes(self) -> list[AsyncSandbox]:
        """The sandboxes this client has open."""
        return list(self._sandboxes)

    @classmethod
    def connect(cls, url: str, token: str | None = None) -> AsyncDrydock:
        """A running ``drydock serve --http``: its MCP URL and token (default ``DRYDOCK_TOKEN``)."""
        return cls(url, token if token is not None else os.environ.get("DRYDOCK_TOKEN"))

    @classmethod
    async def local(
        cls,
        *,
        cli: str | Sequence[str] | None = None,
        state_dir: str | None = None,
        repo: str | None = None,
        allow_repos: Sequence[str] = (),
        image: str | None = None,
        egress: Sequence[str] | None = None,
        runtime: str | None = None,
        pool: int | None = None,
        memory_mb: int | None = None,
        cpus: float | None = None,
        max_sessions: int | None = None,
        extra_args: Sequence[str] = (),
    ) -> AsyncDrydock:
        """Starts ``drydock serve --http`` for this client (see ``LocalServer`` for each option).

        ``repo`` is the repository sessions copy by default (an empty one when omitted);
        ``allow_repos`` others ``create(repo=...)`` may name. ``image`` the box image (default
        drydock's sandbox image); ``egress`` hosts boxes may reach (default none: no network).
        """
        options = dict(
            cli=cli,
            state_dir=state_dir,
            repo=repo,
            allow_repos=tuple(allow_repos),
            image=image,
            egress=tuple(egress) if egress else None,
            runtime=runtime,
            pool=pool,
            memory_mb=memory_mb,
            cpus=cpus,
            max_sessions=max_sessions,
            extra_args=tuple(extra_args),
        )
        server = await asyncio.to_thread(LocalServer, **options)  # type: ignore[arg-type]
        return cls(server.url, server.token, server=server, **options)

    @property
    def server(self) -> LocalServer | None:
        """The server this client started, if it did."""
        return self._server

    async def _connection(self) -> Connection:
        if self._closed:
            raise DrydockError("this Drydock is closed; make a new one", code="closed")
        if self._conn_lock is None:
            self._conn_lock = asyncio.Lock()
        async with self._conn_lock:
            if self._conn is not None and self._conn.loop is not asyncio.get_running_loop():
                raise DrydockError(
                    "this Drydock is bound to the event loop it first connected in; make one per loop "
                    "(or use the sync Drydock, which keeps its own loop)",
                    code="wrong_event_loop",
                )
            if self._conn is None or self._conn.closed:
                self._conn = await Connection.open(self.url, self._token)
            return self._conn

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout_s: float = TOOL_TIMEOUT_S,
        on_progress: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """Calls one of the server's MCP tools; errors come back as drydock's classes."""
        conn = await self._connection()
        return await conn.call(tool, arguments, timeout_s=timeout_s, on_progress=on_progress)

    async def create(
        self,
        repo: str | os.PathLike[str] | None = None,
        *,
        ref: str | None = None,
        directory: str | os.PathLike[str] | None = None,
        image: str | None = None,
        egress: Sequence[str] | None = None,
        memory_mb: int | None = None,
        cpus: float | None = None,
        timeout: int | None = None,
        on_progress: Callable[[str], None] | None = None,
    ) -> AsyncSandbox:
        """Starts a box and resolves to its ``AsyncSandbox``.

        ``repo``: a git repository on the server's machine the server serves (its ``--repo``,
        the default, or an ``--allow-repo``); ``ref`` a branch, tag or commit of it.
        ``directory``: a local directory whose files are copied into ``/workspace`` (on top of
        the server's repository, an empty one for ``local()``). ``image``: a box image;
        ``local()`` starts a server of its own for each other image, a remote server serves one
        (``drydock serve --image``). ``egress``: hosts the box may reach, within the server's
        ``--egress`` (default: all of it; ``[]`` none). ``timeout``: the default per-command
        limit in seconds.
        """
        if image is not None and image != (self._server.image if self._server else None):
            if self._server is None:
                raise InvalidArgumentError(
                    f"image: a remote server makes every box from its own image; start one with "
                    f"`drydock serve --http --image {image}` and connect to it, or use Drydock.local()",
                    field="image",
                )
            other = self._extra_servers.get(image)
            if other is None:
                other = await AsyncDrydock.local(**{**self._local, "image": image})
                self._extra_servers[image] = other
            return await other.create(
                repo,
                ref=ref,
                directory=directory,
                egress=egress,
                memory_mb=memory_mb,
                cpus=cpus,
                timeout=timeout,
                on_progress=on_progress,
            )
        if repo is not None and directory is not None:
            raise InvalidArgumentError("directory: give repo or directory, not both", field="directory")
        args: dict[str, Any] = {}
        if repo is not None:
            args["repo"] = str(Path(repo).resolve()) if self._server is not None else str(repo)
        if ref is not None:
            args["ref"] = ref
        if egress is not None:
            args["egress"] = list(egress)
        if memory_mb is not None:
            args["memory_mb"] = memory_mb
        if cpus is not None:
            args["cpus"] = cpus
        if timeout is not None:
            args["timeout_s"] = int(timeout)
        upload = None
        if directory is not None:
            root = Path(directory)
            if not root.is_dir():
                raise InvalidArgumentError(f"directory: {directory} is not a directory", field="directory")
            upload = _tar_directory(root)
        reply = await self.call("session_create", args, timeout_s=TOOL_TIMEOUT_S + 600, on_progress=on_progress)
        box = AsyncSandbox(self, _session_info(reply), secret=str(reply.get("session_secret") or ""))
        self._sandboxes.add(box)
        if upload is not None:
            try:
                await box._extract_tar(upload)
            except BaseException:
                await box.close()
                raise
        return box

    async def close(self) -> None:
        """Closes every sandbox still open, ends the MCP session, and stops a server it started."""
        if self._closed:
            return
        self._closed = True
        try:
            for box in list(self._sandboxes):
                try:
                    await box.close()
                except Exception:  # noqa: BLE001 - the server removes them with the session
                    pass
            if self._conn is not None:
                await self._conn.close()
            for other in self._extra_servers.values():
                await other.close()
        finally:
            if self._server is not None:
                await asyncio.to_thread(self._server.stop)

    async def __aenter__(self) -> AsyncDrydock:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _tar_directory(root: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for entry in sorted(root.iterdir()):
            tar.add(str(entry), arcname=entry.name)
    return buffer.getvalue()


class AsyncSandbox:
    """One drydock session: a hardened box with a copy of the repository in ``/workspace``."""

    def __init__(self, drydock: AsyncDrydock, info: SessionInfo, *, secret: str = "") -> None:
        self._drydock = drydock
        self.info = info
        self._secret = secret
        self._closed = False
        self._output_cap: int | None = None

    def __repr__(self) -> str:
        return f"AsyncSandbox(id={self.info.id!r}, box={self.info.box!r}, image={self.info.image!r})"

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def session_secret(self) -> str:
        """Continues the session over a new connection (``session_resume``); keep it like a password."""
        return self._secret

    async def _call(self, tool: str, args: dict[str, Any], *, timeout_s: float = TOOL_TIMEOUT_S, on_progress: Callable[[str], None] | None = None) -> dict[str, Any]:
        if self._closed:
            raise SessionNotFoundError(
                f"session {self.info.id} was closed; create a new sandbox", code="session_not_found"
            )
        return await self._drydock.call(tool, {**args, "session_id": self.info.id}, timeout_s=timeout_s, on_progress=on_progress)

    # ---- commands -------------------------------------------------------------------------

    async def _bash(
        self,
        command: str,
        *,
        timeout: int | None,
        max_output_bytes: int | None,
        on_output: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        args: dict[str, Any] = {"command": command}
        limit = self.info.command_timeout_s
        if timeout is not None:
            limit = max(1, min(MAX_TIMEOUT_S, int(-(-timeout // 1))))
            args["timeout_s"] = limit
        cap = self._drydock._output_cap
        if max_output_bytes is not None:
            args["max_output_bytes"] = max(1000, int(max_output_bytes) if cap is None else min(cap, int(max_output_bytes)))
        try:
            return await self._call("bash", args, timeout_s=limit + REPLY_GRACE_S, on_progress=on_output)
        except InvalidArgumentError as error:
            # Above the server's --max-output-bytes: its limit is in the message; keep to it.
            found = re.search(r"limit of (\d+) bytes", error.message)
            if error.field != "max_output_bytes" or found is None or "max_output_bytes" not in args:
                raise
            self._drydock._output_cap = int(found.group(1))
            args["max_output_bytes"] = min(args["max_output_bytes"], self._drydock._output_cap)
            return await self._call("bash", args, timeout_s=limit + REPLY_GRACE_S, on_progress=on_output)

    async def run(
        self,
        command: str | Sequence[str],
        *,
        stdin: str | bytes | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_output_bytes: int | None = None,
        tty: bool = True,
        on_output: Callable[[str], None] | None = None,
    ) -> CommandResult:
        """Runs a command and returns when it ended, whatever its exit code.

        ``command``: a shell string (run in the session's persistent shell: ``cd`` and variables
        persist) or an argv list (exec'd as it is, no shell). ``stdin``: data for its standard
        input (else empty). ``cwd``: its working directory (relative: to ``/workspace``);
        ``env``: variables set for it; with either, or with ``stdin``, it runs in a subshell, so
        nothing of it persists. ``timeout`` in seconds (default: the session's, 120); past it the
        command is stopped as a whole and ``timed_out`` is true. ``max_output_bytes``: how much
        of each stream to keep, head and tail (default: the session's, ``info.max_output_bytes``). ``tty=False`` gives the command
        plain files for stdout and stderr instead of terminals (as ``docker exec`` without
        ``-t``); their output then arrives when it ended. ``on_output`` gets each output line as
        it arrives.
        """
        if isinstance(command, (list, tuple)) and not command:
            raise InvalidArgumentError("command: the argv list is empty", field="command")
        if timeout is not None and timeout <= 0:
            raise InvalidArgumentError("timeout: must be a positive number of seconds", field="timeout")
        data: bytes | None = stdin.encode() if isinstance(stdin, str) else stdin
        stdin_file: str | None = None
        stdin_b64: str | None = None
        if data is not None:
            if len(data) > INLINE_STDIN:
                stdin_file = await self._upload_temp(data)
            else:
                stdin_b64 = bs.b64(data)
        try:
            line = bs.exec_command(
                command if isinstance(command, str) else list(command),
                cwd=bs.workspace_path(cwd) if cwd is not None else None,
                env=env,
                stdin_b64=stdin_b64,
                stdin_file=stdin_file,
                tty=tty,
            )
        except ValueError as error:
            raise InvalidArgumentError(f"env: {error}" if env else str(error), field="env") from None
        if stdin_file is not None:
            line = f"{line}; __drydock_rc=$?; command rm -f -- {shlex.quote(stdin_file)}; (exit $__drydock_rc)"
        reply = await self._bash(
            line,
            timeout=int(-(-timeout // 1)) if timeout is not None else None,
            max_output_bytes=max_output_bytes,
            on_output=on_output,
        )
        stdout = str(reply.get("stdout") or "")
        stderr = str(reply.get("stderr") or "")
        return CommandResult(
            exit_code=reply["exit_code"] if isinstance(reply.get("exit_code"), int) else None,
            stdout=stdout,
            stderr=stderr,
            # The reply has each stream once, apart (no merged copy): stdout, then stderr.
            output=stdout + stderr,
            timed_out=bool(reply.get("timed_out")),
            truncated=bool(reply.get("truncated")),
            restarted=bool(reply.get("restarted")),
            note=reply.get("note") if isinstance(reply.get("note"), str) else None,
        )

    async def restart_shell(self) -> None:
        """A fresh shell: ``/workspace``, the box's environment, nothing kept."""
        await self._call("bash", {"command": "", "restart": True})

    # ---- files ----------------------------------------------------------------------------

    async def _script(self, script: str, args: Sequence[str], *, stdin_b64: str | None = None, max_output_bytes: int | None = None) -> tuple[str, int]:
        reply = await self._bash(
            bs.script_command(script, args, stdin_b64),
            timeout=600,
            max_output_bytes=max_output_bytes,
        )
        if reply.get("truncated"):
            raise LimitExceededError(
                "the file access reply was cut at the session's output cap; the server's "
                "--max-output-bytes is too small for this client's chunks"
            )
        parsed = bs.parse_script_output(str(reply.get("stdout") or ""))
        if parsed is None:
            raise DrydockError(
                f"file access through the box's shell failed (exit code {reply.get('exit_code')}): "
                f"{str(reply.get('stderr') or '')[-500:]} {str(reply.get('note') or '')}",
                code="command_exit",
            )
        return parsed

    async def _check_path(self, path: str) -> None:
        """The server's own confinement check of a path (``file_editor``): a path leaving
        ``/workspace``, also through a symlink in the box, is refused there."""
        try:
            await self._call("file_editor", {"operation": "view", "path": path, "view_range": [1, 1]})
        except PathOutsideWorkspaceError:
            raise
        except DrydockError:
            pass

    def _refusal(self, status: int, path: str) -> DrydockError:
        if status == bs.EXIT_OUTSIDE:
            return PathOutsideWorkspaceError(
                f'path "{path}" is refused: it resolves outside /workspace. Use a path under /workspace or relative to it',
                field="path",
            )
        if status == bs.EXIT_MISSING:
            return NotFoundError(f"{path}: no such file or directory in the box", field="path")
        if status == bs.EXIT_DIRECTORY:
            return IsDirectoryError(f"path: {path} is a directory, not a file", code="invalid_argument", field="path")
        if status == bs.EXIT_DENIED:
            return PermissionDeniedError(f"{path}: permission denied in the box (the box user cannot read or write it)")
        return InvalidArgumentError(f"path: {path} is not a regular file (or its directory is not a directory)", field="path")

    async def _read(self, path: str, *, confine: bool, limit: int | None = None, base: str = bs.WORKSPACE) -> bytes:
        absolute = bs.workspace_path(path, base)
        if confine:
            await self._check_path(absolute)
        chunk = READ_CHUNK
        parts: list[bytes] = []
        offset = 0
        size = -1
        while True:
            cap = self._drydock._output_cap
            if cap is not None and cap < READ_CHUNK // 3 * 4 + 4096:
                chunk = max(3, (cap - 4096) // 4 * 3)
            try:
                text, status = await self._script(
                    bs.READ_SCRIPT,
                    [absolute, "1" if confine else "0", str(offset), str(chunk)],
                    max_output_bytes=chunk // 3 * 4 + 4096,
                )
            except LimitExceededError:
                if self._drydock._output_cap == cap:
                    raise
                continue  # the server's cap is smaller than asked: again in smaller parts
            if status != 0:
                raise self._refusal(status, path)
            head, _, encoded = text.partition("\n")
            size = int(head.strip() or 0)
            if limit is not None and size > limit:
                raise LimitExceededError(f"{path}: {size} bytes is over the limit of {limit} bytes")
            data = base64.b64decode(encoded.strip())
            parts.append(data)
            offset += len(data)
            if not data or offset >= size:
                break
        return b"".join(parts)

    async def _upload_temp(self, data: bytes) -> str:
        """Stages bytes in the box and returns the staged file's path.

        The bytes go base64-encoded through ``file_editor`` (the server writes a file through
        the engine's exec stdin, fast; typing them into the shell is not), in parts under the
        server's request limit, into the box's ``.git`` directory where no diff sees them, and are
        decoded into one file in ``/tmp``.
        """
        tag = secrets.token_hex(8)
        encoded = bs.b64(data)
        parts = []
        step = WRITE_CHUNK // 3 * 4
        for index, start in enumerate(range(0, max(len(encoded), 1), step)):
            part = f"{bs.WORKSPACE}/.git/drydock-upload-{tag}.{index:05d}"
            await self._call(
                "file_editor",
                {"operation": "create", "path": part, "content": encoded[start : start + step] or "", "overwrite": True},
            )
            parts.append(part)
        temp = f"/tmp/.drydock-upload-{tag}"
        joined = " ".join(shlex.quote(p) for p in parts)
        _, status = await self._script(
            f'cat -- {joined} | base64 -d > "$1"; s=$?; rm -f -- {joined}; exit $s', [temp]
        )
        if status != 0:
            raise LimitExceededError(
                f"could not stage {len(data)} bytes in the box's /tmp (status {status}); it is a "
                "small tmpfs: write less at once"
            )
        return temp

    async def _write(self, path: str, data: bytes, *, confine: bool, base: str = bs.WORKSPACE) -> None:
        absolute = bs.workspace_path(path, base)
        if confine:
            await self._check_path(absolute)
        temp = await self._upload_temp(data)
        _, status = await self._script(bs.PLACE_SCRIPT, [absolute, "1" if confine else "0", temp])
        if status != 0:
            raise self._refusal(status, path)

    async def read_bytes(self, path: str) -> bytes:
        """A file's exact bytes (any size the box holds, in parts of 3 MiB)."""
        return await self._read(path, confine=True)

    async def read_text(self, path: str, encoding: str = "utf-8", errors: str = "strict") -> str:
        """A file decoded as text; newlines (CRLF too) are kept as they are."""
        return (await self.read_bytes(path)).decode(encoding, errors)

    async def write_bytes(self, path: str, data: bytes) -> None:
        """Writes the whole file (parent directories made; an existing file keeps its mode),
        in parts of 2 MiB, so any size fits the server's request limit."""
        await self._write(path, bytes(data), confine=True)

    async def write_text(self, path: str, text: str, encoding: str = "utf-8") -> None:
        await self.write_bytes(path, text.encode(encoding))

    async def _extract_tar(self, archive: bytes) -> None:
        temp = await self._upload_temp(archive)
        result = await self.run(
            f"tar -xzf {shlex.quote(temp)} -C /workspace --no-same-owner; rc=$?; rm -f {shlex.quote(temp)}; exit $rc",
            timeout=600,
            tty=False,
        )
        if result.exit_code != 0:
            raise DrydockError(f"copying the directory into the box failed: {result.stderr[-1000:]}", code="command_exit")

    # ---- changes --------------------------------------------------------------------------

    async def diff(self) -> Diff:
        """Everything changed in the box since it started, committed there or not (binary-safe)."""
        reply = await self._call("session_diff", {})
        return Diff(diff=str(reply.get("diff", "")), stat=str(reply.get("stat", "")), base_commit=str(reply.get("base_commit", "")))

    async def apply(
        self,
        *,
        branch: str | None = None,
        worktree: bool = False,
        replace_branch: bool = False,
        allow_ignore_changes: bool = False,
    ) -> AppliedChanges:
        """Brings the diff to the host repository: a commit on a new branch (default
        ``drydock/<id>``), leaving the working tree alone, or with ``worktree=True`` into the
        working tree. A diff that does not apply changes nothing (``ApplyConflictError``)."""
        args: dict[str, Any] = {"mode": "worktree" if worktree else "branch"}
        if branch is not None:
            args["branch"] = branch
        if replace_branch:
            args["replace_branch"] = True
        if allow_ignore_changes:
            args["allow_ignore_changes"] = True
        reply = await self._call("session_apply", args)
        return AppliedChanges(
            mode=reply.get("mode", args["mode"]),
            files=list(reply.get("files") or []),
            stat=dict(reply.get("stat") or {}),
            branch=reply.get("branch") if isinstance(reply.get("branch"), str) else None,
            commit=reply.get("commit") if isinstance(reply.get("commit"), str) else None,
            warnings=list(reply.get("warnings") or []),
            message=reply.get("message") if isinstance(reply.get("message"), str) else None,
        )

    async def checkpoint(self, name: str, *, message: str | None = None, include_ignored: bool = False) -> Checkpoint:
        """Saves the box's state (changed files, git state, the shell's cwd and exported
        variables) as a named checkpoint."""
        args: dict[str, Any] = {"name": name}
        if message is not None:
            args["message"] = message
        if include_ignored:
            args["include_ignored"] = True
        return _checkpoint(await self._call("session_checkpoint", args))

    async def restore(self, name: str) -> RestoredCheckpoint:
        """Returns the box exactly to a checkpoint."""
        reply = await self._call("session_restore", {"name": name})
        return RestoredCheckpoint(
            name=str(reply.get("name", name)),
            changed_files=int(reply.get("changed_files", 0)),
            cwd=reply.get("cwd") if isinstance(reply.get("cwd"), str) else None,
        )

    async def checkpoints(self) -> list[Checkpoint]:
        reply = await self._call("session_checkpoints", {})
        return [_checkpoint(c) for c in reply.get("checkpoints") or []]

    async def fork(self, n: int = 1, *, checkpoint: str | None = None) -> list[AsyncSandbox]:
        """``n`` new sandboxes, each in a box of its own, from this box's state now or a
        checkpoint. All or none."""
        args: dict[str, Any] = {"n": n}
        if checkpoint is not None:
            args["checkpoint"] = checkpoint
        reply = await self._call("session_fork", args, timeout_s=TOOL_TIMEOUT_S + 600)
        forks = []
        for f in reply.get("forks") or []:
            info = SessionInfo(**{**self.info.__dict__, "id": str(f["session_id"]), "box": str(f.get("box", ""))})
            box = AsyncSandbox(self._drydock, info, secret=str(f.get("session_secret") or ""))
            self._drydock._sandboxes.add(box)
            forks.append(box)
        return forks

    async def close(self) -> None:
        """Removes the box and everything in it; closing twice is fine."""
        if self._closed:
            return
        self._drydock._sandboxes.discard(self)
        try:
            await self._call("session_destroy", {})
        except (SessionNotFoundError, BoxGoneError):
            pass
        finally:
            self._closed = True

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

