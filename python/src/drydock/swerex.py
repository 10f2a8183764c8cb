"""SWE-ReX on drydock: a deployment whose runtime is a drydock box, so SWE-agent (or anything
written against SWE-ReX's ``AbstractDeployment``) runs its commands in a hardened, networkless box.

SWE-ReX's own deployments start ``swerex-remote`` (an HTTP server) in the sandbox and talk to it
over the network. A drydock box has no network and no port the host can reach, so
``DrydockRuntime`` implements ``AbstractRuntime`` on this package's client instead: the session's
commands go through drydock's persistent shell (``bash`` tool), ``execute`` is a subprocess of
it, and the file verbs use the client's file access. ::

    from drydock.swerex import DrydockDeployment
    from swerex.runtime.abstract import BashAction, CreateBashSessionRequest

    deployment = DrydockDeployment(repo="/srv/repos/app")
    await deployment.start()                      # starts `drydock serve --http` and a box
    await deployment.runtime.create_session(CreateBashSessionRequest())
    obs = await deployment.runtime.run_in_session(BashAction(command="pytest -q", check="silent"))
    await deployment.stop()                       # removes the box, stops the server
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import os
import shlex
import tarfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

# SWE-ReX's models and errors are its API; the runtime answers with exactly these.
from swerex.deployment.abstract import AbstractDeployment
from swerex.deployment.hooks.abstract import CombinedDeploymentHook, DeploymentHook
from swerex.exceptions import (
    BashIncorrectSyntaxError,
    CommandTimeoutError,
    DeploymentNotStartedError,
    DeploymentStartupError,
    NonZeroExitCodeError,
    SessionDoesNotExistError,
    SessionExistsError,
    SwerexException,
)
from swerex.runtime.abstract import (
    AbstractRuntime,
    Action,
    BashInterruptAction,
    BashObservation,
    CloseBashSessionResponse,
    CloseResponse,
    CloseSessionRequest,
    CloseSessionResponse,
    Command,
    CommandResponse,
    CreateBashSessionRequest,
    CreateBashSessionResponse,
    CreateSessionRequest,
    CreateSessionResponse,
    IsAliveResponse,
    Observation,
    ReadFileRequest,
    ReadFileResponse,
    UploadRequest,
    UploadResponse,
    WriteFileRequest,
    WriteFileResponse,
)

# SWE-ReX's own cleaning of a session's terminal output (ANSI sequences, CRLF), so a session's
# output reads as it does on SWE-ReX's runtimes.
from swerex.runtime.local import _strip_control_chars

from . import _box_scripts as bs
from ._sync import Drydock, Sandbox
from .errors import DrydockError, IsDirectoryError

__all__ = [
    "DrydockDeployment",
    "DrydockDeploymentConfig",
    "DrydockRuntime",
    "DrydockSessionLimitError",
    "DrydockUnsupportedError",
]

# SWE-ReX's "no timeout" (None): the longest drydock's bash tool allows.
NO_TIMEOUT_S = 86_400


class DrydockUnsupportedError(SwerexException, NotImplementedError):
    """A SWE-ReX feature drydock's shell does not have (interactive programs, expect strings)."""


class DrydockSessionLimitError(SwerexException, ValueError):
    """A second shell session while one is open: a drydock box has one persistent shell."""


class DrydockDeploymentConfig(BaseModel):
    """What ``DrydockDeployment`` starts: a box holding a copy of a repository or directory."""

    type: Literal["drydock"] = "drydock"
    repo: str | None = None
    """A git repository copied into ``/workspace`` (default: an empty one, or the server's ``--repo``)."""
    ref: str | None = None
    """A branch, tag or commit of ``repo`` instead of its working tree."""
    directory: str | None = None
    """A local directory copied into ``/workspace`` instead of a repository."""
    image: str | None = None
    """The box image (default: drydock's sandbox image)."""
    egress: list[str] | None = None
    """Hosts the box may reach over HTTPS (default none: no network)."""
    container_runtime: str | None = None
    """``runsc`` for gVisor (the server's ``--runtime``)."""
    memory_mb: int | None = None
    cpus: float | None = None
    max_output_bytes: int = 16_000_000
    """The most of each stream one command keeps (head and tail); a remote server's own
    ``--max-output-bytes`` caps it."""
    url: str | None = None
    """A running ``drydock serve --http`` (its MCP URL) instead of one started for this deployment."""
    token: str | None = Field(default=None, repr=False)
    """That server's token (default ``DRYDOCK_TOKEN``); never in a repr."""
    state_dir: str | None = None
    """Where a started server keeps its audit logs (default: a temporary directory, removed)."""
    cli: str | None = None
    """The drydock command (default ``DRYDOCK_CLI``, else ``drydock`` on ``PATH``)."""

    model_config = {"extra": "forbid"}


class DrydockRuntime(AbstractRuntime):
    """SWE-ReX's runtime interface on one drydock box.

    Its methods are coroutines of whichever event loop calls them (SWE-agent calls each through
    ``asyncio.run``, a new loop every time): the client's calls run on the sync client's own loop
    thread, reached through ``asyncio.to_thread``.
    """

    def __init__(self, box: Sandbox, *, max_output_bytes: int = 16_000_000, logger: logging.Logger | None = None) -> None:
        self.box = box
        self.logger = logger or logging.getLogger("drydock.swerex")
        self._max_output_bytes = max_output_bytes
        # SWE-ReX session names; a drydock box has one persistent shell, held by the open one.
        self._sessions: set[str] = set()
        self._shell_used = False
        self._closed = False
        self._environment: dict[str, str] | None = None

    async def _run(self, command: str | list[str], **options: Any):
        return await asyncio.to_thread(self.box.run, command, max_output_bytes=self._max_output_bytes, **options)

    async def is_alive(self, *, timeout: float | None = None) -> IsAliveResponse:
        """True when the box answers a command (within ``timeout`` seconds, if given)."""
        if self._closed:
            return IsAliveResponse(is_alive=False, message="the runtime is closed")
        try:
            result = await asyncio.wait_for(self._run(["true"], tty=False, timeout=timeout or 30), timeout)
        except (DrydockError, asyncio.TimeoutError, TimeoutError) as error:  # noqa: UP041 - apart before 3.11
            return IsAliveResponse(is_alive=False, message=f"the drydock box does not answer: {error}")
        if result.exit_code != 0:
            return IsAliveResponse(is_alive=False, message=f"`true` in the box gave {result.exit_code}: {result.note or ''}")
        return IsAliveResponse(is_alive=True)

    # ---- sessions -------------------------------------------------------------------------

    async def create_session(self, request: CreateSessionRequest) -> CreateSessionResponse:
        """Gives the session the box's persistent shell (fresh if a session had it before) and
        sources ``startup_source`` in it."""
        if request.session in self._sessions:
            raise SessionExistsError(f"session {request.session} already exists")
        if not isinstance(request, CreateBashSessionRequest):
            raise TypeError(f"unknown session type: {request!r}")
        if self._sessions:
            open_one = next(iter(self._sessions))
            raise DrydockSessionLimitError(
                f"session {request.session!r}: a drydock box has one persistent shell and session "
                f"{open_one!r} holds it; close it first (close_session), or run independent "
                "commands with execute()"
            )
        if self._shell_used:
            await asyncio.to_thread(self.box.restart_shell)
        self._shell_used = True
        output = ""
        if request.startup_source:
            line = " ; ".join(f"source {shlex.quote(path)}" for path in request.startup_source)
            result = await self._run(line, timeout=max(request.startup_timeout, 1))
            if result.timed_out:
                raise CommandTimeoutError(f"timeout after {request.startup_timeout} seconds while sourcing {request.startup_source}")
            output = _strip_control_chars(result.output)
        self._sessions.add(request.session)
        return CreateBashSessionResponse(output=output)

    async def run_in_session(self, action: Action) -> Observation:
        """Runs a command in the session's shell (``cd`` and variables persist), with SWE-ReX's
        syntax check, timeout and ``check`` semantics."""
        if action.session not in self._sessions:
            raise SessionDoesNotExistError(f"session {action.session!r} does not exist")
        if isinstance(action, BashInterruptAction):
            # drydock stops a command as a whole when its time is up (or it is cancelled), so
            # nothing is left running between two calls: there is nothing to interrupt.
            return BashObservation(output="", exit_code=0, expect_string="")
        if action.is_interactive_command or action.is_interactive_quit or action.expect:
            raise DrydockUnsupportedError(
                f"command {action.command!r}: drydock's shell runs each command to its end, so "
                "is_interactive_command, is_interactive_quit and expect strings are not supported; "
                "run the program non-interactively (arguments, a script, or a here-document on its stdin)"
            )
        await self._check_syntax(action.command)
        timeout = action.timeout if action.timeout is not None else NO_TIMEOUT_S
        result = await self._run(action.command, timeout=timeout)
        if result.timed_out:
            raise CommandTimeoutError(f"timeout after {action.timeout} seconds while running command {action.command!r}")
        output = _strip_control_chars(result.output)
        if action.check == "ignore":
            return BashObservation(output=output, exit_code=None, expect_string="")
        observation = BashObservation(output=output, exit_code=result.exit_code, expect_string="")
        if action.check == "raise" and result.exit_code != 0:
            msg = f"Command {action.command!r} failed with exit code {result.exit_code}. Here is the output:\n{output!r}"
            if action.error_msg:
                msg = f"{action.error_msg}: {msg}"
            raise NonZeroExitCodeError(msg)
        return observation

    async def _check_syntax(self, command: str) -> None:
        """``bash -n`` on the command, in the box (the bash that runs it), as SWE-ReX checks
        before it runs one; the command travels on stdin, so nothing of it is interpreted."""
        result = await self._run(["bash", "-n"], stdin=command + "\n", tty=False, timeout=30)
        if result.exit_code == 0:
            return
        msg = (
            f"Error (exit code {result.exit_code}) while checking bash command \n{command!r}\n"
            f"---- Stderr ----\n{result.stderr}\n---- Stdout ----\n{result.stdout}"
        )
        raise BashIncorrectSyntaxError(msg, extra_info={"bash_stdout": result.stdout, "bash_stderr": result.stderr})

    async def close_session(self, request: CloseSessionRequest) -> CloseSessionResponse:
        """Ends the session; the next one gets a fresh shell."""
        if request.session not in self._sessions:
            raise SessionDoesNotExistError(f"session {request.session!r} does not exist")
        self._sessions.discard(request.session)
        return CloseBashSessionResponse()

    # ---- commands outside the session ----------------------------------------------------

    async def execute(self, command: Command) -> CommandResponse:
        """Runs a command as ``subprocess.run`` would (argv, or ``/bin/sh -c`` with
        ``shell=True``), in ``cwd`` (default ``/workspace``), with ``env`` as its whole
        environment (default: the box's as it started); it neither sees nor changes the
        session's shell."""
        argv = _subprocess_argv(command.command, command.shell)
        # The environment is the box's own as it started (not what a session exported), or
        # `env` as the whole of it, as subprocess's env= does; DRYDOCK_COMMAND (the frame's token)
        # kept, so a stop still finds every process the command started.
        environment = command.env if command.env is not None else await self._box_environment()
        pairs = [f"{key}={value}" for key, value in environment.items() if key != "DRYDOCK_COMMAND"]
        argv = ["/bin/sh", "-c", 'exec env -i "DRYDOCK_COMMAND=$DRYDOCK_COMMAND" "$@"', "drydock", *pairs, *argv]
        if command.merge_output_streams:
            argv = ["/bin/sh", "-c", 'exec "$@" 2>&1', "drydock", *argv]
        timeout = command.timeout if command.timeout is not None else NO_TIMEOUT_S
        result = await self._run(argv, cwd=command.cwd or bs.WORKSPACE, timeout=timeout, tty=False)
        if result.timed_out:
            raise CommandTimeoutError(f"Timeout ({command.timeout}s) exceeded while running command")
        response = CommandResponse(stdout=result.stdout, stderr=result.stderr, exit_code=result.exit_code)
        if command.check and result.exit_code != 0:
            msg = (
                f"Command {command.command!r} failed with exit code {result.exit_code}. "
                f"Stdout:\n{response.stdout!r}\nStderr:\n{response.stderr!r}"
            )
            if command.error_msg:
                msg = f"{command.error_msg}: {msg}"
            raise NonZeroExitCodeError(msg)
        return response

    async def _box_environment(self) -> dict[str, str]:
        if self._environment is None:
            self._environment = await asyncio.to_thread(self.capture_environment)
        return self._environment

    def capture_environment(self) -> dict[str, str]:
        """The box's environment now (the deployment takes it before any session runs)."""
        result = self.box.run(["/bin/sh", "-c", "env -0 | base64 -w0"], tty=False, timeout=60)
        if result.exit_code != 0:
            raise DeploymentStartupError(f"could not read the box's environment: {result.stderr.strip()[-500:]}")
        environment: dict[str, str] = {}
        for entry in base64.b64decode(result.stdout.strip()).decode(errors="replace").split("\0"):
            key, sep, value = entry.partition("=")
            if sep and key:
                environment[key] = value
        self._environment = environment
        return environment

    # ---- files ----------------------------------------------------------------------------

    async def read_file(self, request: ReadFileRequest) -> ReadFileResponse:
        """A file of the box (a relative path is under ``/workspace``); raises
        ``FileNotFoundError``, ``IsADirectoryError`` or ``PermissionError`` as ``Path.read_text``."""
        data = await asyncio.to_thread(self._read, request.path)
        return ReadFileResponse(content=data.decode(request.encoding or "utf-8", request.errors or "strict"))

    async def write_file(self, request: WriteFileRequest) -> WriteFileResponse:
        """Writes the whole file in the box, parent directories made."""
        await asyncio.to_thread(self._write, request.path, request.content.encode())
        return WriteFileResponse()

    async def upload(self, request: UploadRequest) -> UploadResponse:
        """Copies a host file or directory into the box, as ``shutil.copy`` / ``copytree``: a
        file into an existing directory keeps its name; a directory's target must not exist."""
        source = Path(request.source_path)
        if source.is_dir():
            archive = await asyncio.to_thread(_tar_of, source)
            await asyncio.to_thread(self._extract, archive, request.target_path)
            return UploadResponse()
        data = await asyncio.to_thread(source.read_bytes)
        try:
            await asyncio.to_thread(self._write, request.target_path, data)
        except IsDirectoryError:
            await asyncio.to_thread(self._write, f"{request.target_path.rstrip('/')}/{source.name}", data)
        return UploadResponse()

    def _read(self, path: str) -> bytes:
        # Anywhere in the box, as SWE-ReX's runtimes read anywhere in their sandbox; the box's
        # read-only root and non-root user decide, and the host never follows a box path.
        inner = self.box._inner
        return self.box._loop.run(inner._read(path, confine=False))

    def _write(self, path: str, data: bytes) -> None:
        inner = self.box._inner
        self.box._loop.run(inner._write(path, data, confine=False))

    def _extract(self, archive: bytes, target: str) -> None:
        inner = self.box._inner
        temp = self.box._loop.run(inner._upload_temp(archive))
        absolute = bs.workspace_path(target)
        result = self.box.run(
            ["bash", "-c", _EXTRACT_SCRIPT, "drydock", temp, absolute],
            tty=False,
            timeout=600,
        )
        if result.exit_code == 17:
            raise FileExistsError(f"upload: {target} already exists in the box; upload a directory to a new path")
        if result.exit_code != 0:
            raise PermissionError(f"upload: could not unpack into {target} in the box: {result.stderr.strip()[-500:]}")

    async def close(self) -> CloseResponse:
        """Ends every session; the box itself goes with the deployment's ``stop()``."""
        self._sessions.clear()
        self._closed = True
        return CloseResponse()


# $1 the uploaded tar, $2 the target directory (made; it must not exist, as copytree's).
_EXTRACT_SCRIPT = r"""
t=$1 d=$2
if [ -e "$d" ]; then rm -f -- "$t"; exit 17; fi
mkdir -p -- "$d" && tar -xf "$t" -C "$d" --no-same-owner --no-same-permissions; s=$?
rm -f -- "$t"
exit $s
"""


def _subprocess_argv(command: str | list[str], shell: bool) -> list[str]:
    """The argv ``subprocess.run(command, shell=shell)`` executes on POSIX."""
    if shell:
        return ["/bin/sh", "-c", command] if isinstance(command, str) else ["/bin/sh", "-c", *command]
    return [command] if isinstance(command, str) else list(command)


def _tar_of(root: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for entry in sorted(root.iterdir()):
            tar.add(str(entry), arcname=entry.name)
    return buffer.getvalue()


class DrydockDeployment(AbstractDeployment):
    """A SWE-ReX deployment on drydock: ``start()`` starts a box (and a local
    ``drydock serve --http`` unless ``url`` names a running one), ``stop()`` removes it.

    Keyword arguments are ``DrydockDeploymentConfig``'s fields.
    """

    def __init__(self, *, logger: logging.Logger | None = None, **kwargs: Any) -> None:
        self._config = DrydockDeploymentConfig(**kwargs)
        self.logger = logger or logging.getLogger("drydock.swerex")
        self._hooks = CombinedDeploymentHook()
        self._drydock: Drydock | None = None
        self._box: Sandbox | None = None
        self._runtime: DrydockRuntime | None = None

    @classmethod
    def from_config(cls, config: DrydockDeploymentConfig) -> DrydockDeployment:
        return cls(**config.model_dump())

    @property
    def box(self) -> Sandbox:
        """The drydock sandbox (diff, apply, checkpoint, fork) once started."""
        if self._box is None:
            raise DeploymentNotStartedError()
        return self._box

    def add_hook(self, hook: DeploymentHook) -> None:
        self._hooks.add_hook(hook)

    @property
    def runtime(self) -> DrydockRuntime:
        if self._runtime is None:
            raise DeploymentNotStartedError()
        return self._runtime

    async def is_alive(self, *, timeout: float | None = None) -> IsAliveResponse:
        return await self.runtime.is_alive(timeout=timeout)

    async def start(self) -> None:
        """Starts the box; a failure leaves nothing behind (``DeploymentStartupError``)."""
        if self._runtime is not None:
            return
        self._hooks.on_custom_step("Starting drydock box")
        try:
            await asyncio.to_thread(self._start)
        except DrydockError as error:
            raise DeploymentStartupError(f"drydock could not start the box: {error}") from error
        assert self._box is not None
        self.logger.info("drydock box %s (session %s)", self._box.info.box, self._box.id)
        runtime = DrydockRuntime(self._box, max_output_bytes=self._config.max_output_bytes, logger=self.logger)
        try:
            await asyncio.to_thread(runtime.capture_environment)
        except BaseException:
            await asyncio.to_thread(self._stop)
            raise
        self._runtime = runtime

    def _start(self) -> None:
        config = self._config
        if config.url:
            drydock = Drydock.connect(config.url, config.token)
        else:
            drydock = Drydock.local(
                cli=config.cli,
                state_dir=config.state_dir,
                repo=os.path.abspath(config.repo) if config.repo else None,
                image=config.image,
                egress=config.egress,
                runtime=config.container_runtime,
                pool=0,
            )
        try:
            self._box = drydock.create(
                config.repo if config.url else None,
                ref=config.ref,
                directory=config.directory,
                image=config.image if config.url else None,
                memory_mb=config.memory_mb,
                cpus=config.cpus,
            )
        except BaseException:
            drydock.close()
            raise
        self._drydock = drydock

    async def stop(self) -> None:
        """Removes the box and stops a server started for it; twice is fine."""
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            await runtime.close()
        await asyncio.to_thread(self._stop)

    def _stop(self) -> None:
        drydock, self._drydock = self._drydock, None
        box, self._box = self._box, None
        if drydock is None:
            return
        try:
            if box is not None:
                box.close()
        finally:
            drydock.close()

    def __del__(self) -> None:
        # SWE-ReX's AbstractDeployment.__del__ schedules stop() on a running loop; a box must go
        # even when no loop runs, so this stops it directly.
        try:
            self._stop()
        except Exception:  # noqa: BLE001, S110 - best effort at interpreter exit
            pass
