"""The sync client: the async one driven on an event loop of its own, in a background thread."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from ._client import AsyncDrydock, AsyncSandbox
from ._local import LocalServer
from ._types import AppliedChanges, Checkpoint, CommandResult, Diff, RestoredCheckpoint, SessionInfo

T = TypeVar("T")


class _LoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name="drydock-loop", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self._thread:
            raise RuntimeError("a sync drydock call from inside its own loop; use the async client there")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


class Drydock:
    """Sync ``AsyncDrydock``: ``Drydock.local()`` starts a server, ``Drydock.connect(url, token)``
    reaches one. Use it as a context manager, or call ``close()``."""

    def __init__(self, inner_factory: Callable[[], Awaitable[AsyncDrydock]]) -> None:
        self._loop = _LoopThread()
        try:
            self._inner: AsyncDrydock = self._loop.run(_call(inner_factory))
        except BaseException:
            self._loop.stop()
            raise

    def __repr__(self) -> str:
        return repr(self._inner).replace("AsyncDrydock", "Drydock", 1)

    @classmethod
    def local(cls, **options: Any) -> Drydock:
        """Starts ``drydock serve --http`` (options as ``AsyncDrydock.local``)."""
        return cls(lambda: AsyncDrydock.local(**options))

    @classmethod
    def connect(cls, url: str, token: str | None = None) -> Drydock:
        token = token if token is not None else os.environ.get("DRYDOCK_TOKEN")

        async def make() -> AsyncDrydock:
            return AsyncDrydock(url, token)

        return cls(make)

    @property
    def url(self) -> str:
        return self._inner.url

    @property
    def server(self) -> LocalServer | None:
        return self._inner.server

    @property
    def aio(self) -> AsyncDrydock:
        """The async client behind this one (bound to this object's loop thread)."""
        return self._inner

    def call(self, tool: str, arguments: dict[str, Any], **kw: Any) -> dict[str, Any]:
        return self._loop.run(self._inner.call(tool, arguments, **kw))

    def create(self, repo: str | os.PathLike[str] | None = None, **options: Any) -> Sandbox:
        """Starts a box (options as ``AsyncDrydock.create``)."""
        return Sandbox(self._loop, self._loop.run(self._inner.create(repo, **options)))

    def close(self) -> None:
        try:
            self._loop.run(self._inner.close())
        finally:
            self._loop.stop()

    def __enter__(self) -> Drydock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _call(factory: Callable[[], Awaitable[T]]) -> T:
    return await factory()


class Sandbox:
    """Sync ``AsyncSandbox``; every method has the async one's arguments and meaning."""

    def __init__(self, loop: _LoopThread, inner: AsyncSandbox) -> None:
        self._loop = loop
        self._inner = inner

    def __repr__(self) -> str:
        return repr(self._inner).replace("AsyncSandbox", "Sandbox", 1)

    @property
    def id(self) -> str:
        return self._inner.id

    @property
    def info(self) -> SessionInfo:
        return self._inner.info

    @property
    def session_secret(self) -> str:
        return self._inner.session_secret

    def run(
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
        return self._loop.run(
            self._inner.run(
                command,
                stdin=stdin,
                cwd=cwd,
                env=env,
                timeout=timeout,
                max_output_bytes=max_output_bytes,
                tty=tty,
                on_output=on_output,
            )
        )

    def restart_shell(self) -> None:
        self._loop.run(self._inner.restart_shell())

    def read_bytes(self, path: str) -> bytes:
        return self._loop.run(self._inner.read_bytes(path))

    def read_text(self, path: str, encoding: str = "utf-8", errors: str = "strict") -> str:
        return self._loop.run(self._inner.read_text(path, encoding, errors))

    def write_bytes(self, path: str, data: bytes) -> None:
        self._loop.run(self._inner.write_bytes(path, data))

    def write_text(self, path: str, text: str, encoding: str = "utf-8") -> None:
        self._loop.run(self._inner.write_text(path, text, encoding))

    def diff(self) -> Diff:
        return self._loop.run(self._inner.diff())

    def apply(self, **options: Any) -> AppliedChanges:
        return self._loop.run(self._inner.apply(**options))

    def checkpoint(self, name: str, **options: Any) -> Checkpoint:
        return self._loop.run(self._inner.checkpoint(name, **options))

    def restore(self, name: str) -> RestoredCheckpoint:
        return self._loop.run(self._inner.restore(name))

    def checkpoints(self) -> list[Checkpoint]:
        return self._loop.run(self._inner.checkpoints())

    def fork(self, n: int = 1, *, checkpoint: str | None = None) -> list[Sandbox]:
        return [Sandbox(self._loop, f) for f in self._loop.run(self._inner.fork(n, checkpoint=checkpoint))]

    def close(self) -> None:
        self._loop.run(self._inner.close())

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
