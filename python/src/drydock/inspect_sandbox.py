"""Inspect AI sandbox provider: ``sandbox="drydock"``.

Registered through the package's ``inspect_ai`` entry point, so installing ``drydock-sandbox``
is enough::

    @task
    def my_task():
        return Task(dataset=..., solver=[use_tools([bash(), python(), text_editor()]), generate()],
                    sandbox="drydock")                                   # the sandbox image
        # or sandbox=("drydock", "Dockerfile")                           # an environment file
        # or sandbox=SandboxEnvironmentSpec("drydock", DrydockSandboxConfig(egress=["pypi"]))

Each sample gets a drydock session: a hardened box (no network, non-root, read-only root file
system, every capability dropped, limits), its working directory ``/workspace``. Every task
configuration gets a ``drydock serve --http`` of its own (started in ``task_init``, stopped in
``task_cleanup``), or uses a running server named by ``url``.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import logging
import os
import posixpath
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal, Union, overload

from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxConnection,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
    SandboxUserUnsupportedError,
    sandboxenv,
)
from pydantic import BaseModel

from ._box_scripts import EXIT_DENIED, EXIT_DIRECTORY, EXIT_MISSING, WORKSPACE
from ._client import AsyncDrydock, AsyncSandbox
from ._images import build_environment_image, build_inspect_tools_image, inspect_tools_archive
from ._local import LocalServer, find_cli
from .errors import (
    BoxGoneError,
    DrydockError,
    IsDirectoryError,
    LimitExceededError,
    NotFoundError,
    PermissionDeniedError,
    ServerUnreachableError,
    SessionNotFoundError,
)

logger = logging.getLogger(__name__)

BOX_USER = "agent"
BOX_UID = 1000


def default_state_dir() -> str:
    """The state directory the provider's servers share (``inspect sandbox cleanup drydock``
    looks there): ``DRYDOCK_INSPECT_STATE_DIR``, else ``~/.local/state/drydock-inspect``."""
    return os.environ.get("DRYDOCK_INSPECT_STATE_DIR") or str(
        Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "drydock-inspect"
    )


class DrydockSandboxConfig(BaseModel, frozen=True):
    """What a task's boxes are made of. Every field is optional."""

    image: str | None = None
    """The box image (default: drydock's sandbox image). It must hold what drydock needs in a
    box (bash, coreutils, git, procps: ``drydock doctor --image`` checks)."""
    environment: str | None = None
    """An environment file built into the image first: a ``Dockerfile`` (its directory is the
    context; ``FROM ${DRYDOCK_SANDBOX}``), a ``devcontainer.json`` or drydock's
    ``environment.yaml``. A relative path is taken from the current directory."""
    inspect_tools: bool = True
    """Install Inspect's sandbox tools into the image (needed by ``text_editor()`` and
    ``bash_session()``; Inspect cannot inject them into a box at run time)."""
    egress: list[str] | None = None
    """Hosts boxes may reach over HTTPS (names, ``*.domain``, sets such as ``pypi``). Default:
    none, the box has no network."""
    runtime: Literal["runc", "runsc", "auto"] | None = None
    """``runsc`` runs every box under gVisor."""
    memory_mb: int | None = None
    cpus: float | None = None
    max_sessions: int | None = None
    """A cap on boxes at once (besides drydock's memory admission)."""
    admission_wait_s: float = 900.0
    """How long a sample waits for drydock to admit its box when the server is full."""
    url: str | None = None
    """A running ``drydock serve --http`` to use instead of starting one (its image is used;
    ``image``, ``environment``, ``egress`` and the limits are then the operator's)."""
    token_env: str = "DRYDOCK_TOKEN"
    """The variable holding that server's token."""
    state_dir: str | None = None
    """The state directory of the servers started (default ``default_state_dir()``)."""
    cli: str | None = None
    """The drydock command (default ``DRYDOCK_CLI``, else ``drydock`` on PATH)."""


def _resolve_config(config: SandboxEnvironmentConfigType | None) -> DrydockSandboxConfig:
    if config is None:
        return DrydockSandboxConfig()
    if isinstance(config, DrydockSandboxConfig):
        return config
    if isinstance(config, BaseModel):
        return DrydockSandboxConfig.model_validate(config.model_dump())
    path = Path(config)
    name = path.name
    if name.endswith((".yaml", ".yml", ".json")) and name not in ("environment.yaml",) and not name.startswith("devcontainer"):
        text = path.read_text()
        if name.endswith(".json"):
            data = json.loads(text)
        else:
            import yaml  # inspect_ai depends on PyYAML

            data = yaml.safe_load(text) or {}
        if isinstance(data, dict) and ("services" in data or "build" in data):
            raise ValueError(
                f"{config}: a compose file; the drydock sandbox takes a Dockerfile, a devcontainer.json, "
                "drydock's environment.yaml or a DrydockSandboxConfig"
            )
        return DrydockSandboxConfig.model_validate(data)
    return DrydockSandboxConfig(environment=str(path.resolve()))


def _config_key(config: DrydockSandboxConfig) -> str:
    return hashlib.sha256(config.model_dump_json().encode()).hexdigest()[:16]


class _TaskServer:
    """A server for one configuration, shared by the tasks that use it, and its clients (one
    per event loop: an MCP connection belongs to the loop it was opened in)."""

    def __init__(self, config: DrydockSandboxConfig) -> None:
        self.config = config
        self.server: LocalServer | None = None
        self.url = config.url or ""
        self.token = os.environ.get(config.token_env) if config.url else None
        self.tasks: set[str] = set()
        self.clients: dict[int, AsyncDrydock] = {}
        self.lock = asyncio.Lock()

    def start(self) -> None:
        config = self.config
        if config.url:
            return
        state_dir = config.state_dir or default_state_dir()
        image = config.image
        if config.environment:
            image = build_environment_image(config.environment, base=image, cli=config.cli, state_dir=state_dir)
        if config.inspect_tools:
            if inspect_tools_archive() is None:
                logger.warning(
                    "drydock: this inspect_ai ships no sandbox tools archive; text_editor() and "
                    "bash_session() will not work in drydock boxes"
                )
            else:
                image = build_inspect_tools_image(base=image, cli=config.cli, state_dir=state_dir)
        self.server = LocalServer(
            cli=config.cli,
            state_dir=state_dir,
            image=image,
            egress=config.egress,
            runtime=config.runtime,
            memory_mb=config.memory_mb,
            cpus=config.cpus,
            max_sessions=config.max_sessions,
            pool=0,
        )
        self.url = self.server.url
        self.token = self.server.token

    def client(self) -> AsyncDrydock:
        loop = id(asyncio.get_running_loop())
        client = self.clients.get(loop)
        if client is None:
            client = AsyncDrydock(self.url, self.token)
            self.clients[loop] = client
        return client

    async def stop(self) -> None:
        clients, self.clients = self.clients, {}
        current = id(asyncio.get_running_loop())
        for loop, client in clients.items():
            if loop == current:
                try:
                    await client.close()
                except Exception:  # noqa: BLE001
                    pass
        if self.server is not None:
            await asyncio.to_thread(self.server.stop)
            self.server = None


_servers: dict[str, _TaskServer] = {}


async def _task_server(config: DrydockSandboxConfig) -> _TaskServer:
    key = _config_key(config)
    entry = _servers.get(key)
    if entry is None:
        entry = _TaskServer(config)
        _servers[key] = entry
    async with entry.lock:
        if not entry.url:
            await asyncio.to_thread(entry.start)
    return entry


def _unavailable(error: BaseException) -> SandboxUnavailableError:
    return SandboxUnavailableError(f"the drydock box is not available: {error}")


@sandboxenv(name="drydock")
class DrydockSandboxEnvironment(SandboxEnvironment):
    """One sample's drydock box."""

    def __init__(self, box: AsyncSandbox, state_dir: str | None) -> None:
        super().__init__()
        self._box = box
        self._state_dir = state_dir

    @property
    def box(self) -> AsyncSandbox:
        """The drydock session behind this sandbox: ``checkpoint()``, ``restore()``, ``fork()``,
        ``diff()`` are there (``sandbox().as_type(DrydockSandboxEnvironment).box``)."""
        return self._box

    # ---- lifecycle ------------------------------------------------------------------------

    @classmethod
    def config_files(cls) -> list[str]:
        return []

    @classmethod
    def default_concurrency(cls) -> int | None:
        # No cap of the provider's own: drydock admits a box when the memory its boxes use now
        # leaves room (a sample waits in sample_init until it does; max_sessions caps the count).
        return None

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return DrydockSandboxConfig(**config)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        entry = await _task_server(_resolve_config(config))
        entry.tasks.add(task_name)

    @classmethod
    async def sample_init(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        metadata: dict[str, str],
    ) -> dict[str, SandboxEnvironment]:
        resolved = _resolve_config(config)
        entry = await _task_server(resolved)
        client = entry.client()
        deadline = time.monotonic() + resolved.admission_wait_s
        while True:
            try:
                box = await client.create()
                break
            except LimitExceededError as error:
                # drydock's admission: no room for another box now. Wait for one to close.
                if time.monotonic() > deadline:
                    raise
                logger.info("drydock: waiting for room for a box: %s", error)
                await asyncio.sleep(2)
        state_dir = entry.server.state_dir if entry.server is not None else None
        return {"default": DrydockSandboxEnvironment(box, state_dir)}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        # Interrupted or not, the boxes go now (a box takes about 0.1 s to remove); a failure
        # here leaves them to the server, which removes its boxes when it stops.
        for environment in environments.values():
            if isinstance(environment, DrydockSandboxEnvironment):
                try:
                    await asyncio.shield(environment._box.close())
                except BaseException as error:  # noqa: BLE001
                    logger.debug("drydock: closing box %s: %s", environment._box.id, error)

    @classmethod
    async def task_cleanup(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool
    ) -> None:
        key = _config_key(_resolve_config(config))
        entry = _servers.get(key)
        if entry is None:
            return
        entry.tasks.discard(task_name)
        if entry.tasks:
            return
        if not cleanup and entry.server is not None:
            print(
                f"drydock: --no-sandbox-cleanup: the boxes' audit logs and diffs stay in "
                f"{entry.server.state_dir} (DRYDOCK_STATE_DIR={entry.server.state_dir} drydock sessions list --all); "
                "the boxes themselves end with the server",
                file=sys.stderr,
            )
        del _servers[key]
        await entry.stop()

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        """``inspect sandbox cleanup drydock [ID]``: boxes of the provider's state directory whose
        server died (``drydock sessions prune``), or the one box ``ID`` names."""
        state_dir = default_state_dir()
        args = find_cli(None) + ["sessions"]
        args += ["rm", id, "--live", "--yes"] if id else ["prune", "--yes"]
        done = subprocess.run(args, env={**os.environ, "DRYDOCK_STATE_DIR": state_dir}, capture_output=True, text=True)
        output = (done.stdout + done.stderr).strip()
        if output:
            print(output)

    # ---- commands ---------------------------------------------------------------------------

    def _check_user(self, user: str | None) -> None:
        if user is None or user in (BOX_USER, str(BOX_UID)):
            return
        raise SandboxUserUnsupportedError(
            f"a drydock box runs every command as its user {BOX_USER} (uid {BOX_UID}), never as "
            f"{user}: there is no root and no setuid in the box (no-new-privileges, every capability "
            "dropped); drop the user argument"
        )

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        self._check_user(user)
        limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
        directory = WORKSPACE if cwd is None else posixpath.join(WORKSPACE, cwd)
        try:
            result = await self._box.run(
                list(cmd),
                stdin=input,
                cwd=directory,
                env=env or None,
                timeout=timeout if timeout is not None else 86_400,
                max_output_bytes=limit,
                tty=False,
            )
        except (SessionNotFoundError, BoxGoneError, ServerUnreachableError) as error:
            raise _unavailable(error) from None
        if result.timed_out:
            timed_out = TimeoutError(f"Command timed out after {timeout} seconds")
            partial = result.stdout + result.stderr
            if partial:
                setattr(timed_out, "truncated_output", partial)
            raise timed_out
        if result.truncated:
            cap = self._box._drydock._output_cap
            limit_str = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR if cap is None or cap >= limit else f"{cap} bytes"
            raise OutputLimitExceededError(limit_str=limit_str, truncated_output=result.stdout)
        code = result.exit_code if result.exit_code is not None else 1
        if code == 126 and "permission denied" in result.stderr.lower():
            raise PermissionError(errno.EACCES, f"Permission denied executing {cmd[0] if cmd else ''}: {result.stderr.strip()}")
        return ExecResult(success=code == 0, returncode=code, stdout=result.stdout, stderr=result.stderr)

    # ---- files ------------------------------------------------------------------------------

    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode("utf-8") if isinstance(contents, str) else bytes(contents)
        try:
            await self._box._write(file, data, confine=False)
        except IsDirectoryError:
            raise IsADirectoryError(errno.EISDIR, f"Failed to write file: {file} because it is a directory already", file) from None
        except PermissionDeniedError:
            raise PermissionError(errno.EACCES, "Permission denied.", file) from None
        except (SessionNotFoundError, BoxGoneError, ServerUnreachableError) as error:
            raise _unavailable(error) from None

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> Union[str, bytes]:
        if posixpath.basename(file.rstrip("/")) in (".", ".."):
            raise IsADirectoryError(errno.EISDIR, "Is a directory.", file)
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        try:
            data = await self._box._read(file, confine=False, limit=limit)
        except NotFoundError:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory.", file) from None
        except IsDirectoryError:
            raise IsADirectoryError(errno.EISDIR, "Is a directory.", file) from None
        except PermissionDeniedError:
            raise PermissionError(errno.EACCES, "Permission denied.", file) from None
        except LimitExceededError:
            raise OutputLimitExceededError(
                limit_str=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
            ) from None
        except (SessionNotFoundError, BoxGoneError, ServerUnreachableError) as error:
            raise _unavailable(error) from None
        except DrydockError as error:
            if error.field == "path":
                raise OSError(errno.EINVAL, "Not a regular file.", file) from None
            raise
        return data.decode("utf-8") if text else data

    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        prefix = f"DRYDOCK_STATE_DIR={shlex.quote(self._state_dir)} " if self._state_dir else ""
        return SandboxConnection(
            type="drydock",
            command=f"{prefix}drydock sessions shell {self._box.id}",
            container=self._box.info.box,
        )

    def default_polling_interval(self) -> float:
        return 0.2


# The exit statuses the box scripts use, re-exported for tests.
__all__ = [
    "DrydockSandboxConfig",
    "DrydockSandboxEnvironment",
    "EXIT_DENIED",
    "EXIT_DIRECTORY",
    "EXIT_MISSING",
    "default_state_dir",
]
