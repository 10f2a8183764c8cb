"""One MCP connection to a running ``drydock serve --http``.

The MCP SDK's streams live in an anyio task group, which must be entered and left in one task:
the connection runs in a task of its own and calls are made on its ``ClientSession`` from any
task of the same event loop. It never reconnects on its own: the server ties sessions to the MCP
session and removes a client's boxes when that session ends, so a new connection could not reach
the old boxes.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from .errors import (
    DrydockError,
    LimitExceededError,
    ServerUnreachableError,
    ToolUnavailableError,
    error_from_reply,
)

CONNECT_TIMEOUT_S = 30.0
# A reply carries each stream once (this client asks for no text, see REPLY_META): room for 4 MiB
# of each stream and JSON's escapes.
MAX_EVENT_BYTES = 64 * 1024 * 1024
# This client reads structuredContent only: asked so, drydock leaves the text for a model out of
# each successful reply, so a command's output crosses the wire once (docs/tools.md).
REPLY_META = {"drydock/reply": "structured"}
# How often a connection with nothing to say pings the server (its idle limit is 30 minutes).
KEEPALIVE_S = 300.0

ProgressFn = Callable[[str], None]

# How a server says it has no such tool (drydock's words, and the MCP SDKs').
_NO_TOOL = re.compile(r"no tool named|unknown tool|tool \S+ not found", re.IGNORECASE)


def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` (the bearer token) replaced."""
    if not secret:
        return text
    return text.replace(secret, "[token]")


def _describe(error: BaseException, token: str | None) -> str:
    """A one-line account of a transport failure, never holding the token."""
    leaves: list[BaseException] = []

    def walk(e: BaseException) -> None:
        inner_errors = getattr(e, "exceptions", None)
        if isinstance(inner_errors, (list, tuple)):
            for inner in inner_errors:
                walk(inner)
        else:
            leaves.append(e)

    walk(error)
    parts = []
    for leaf in leaves or [error]:
        text = str(leaf) or type(leaf).__name__
        if re.search(r"\b401\b|\b403\b|unauthori[sz]ed", text, re.IGNORECASE):
            text = f"{text}: the token is missing or wrong; pass the server's token (DRYDOCK_TOKEN, or the token file the server printed)"
        parts.append(text)
    return redact("; ".join(dict.fromkeys(parts)), token)


class Connection:
    """A live MCP session with the server; ``call`` is safe from concurrent tasks of its loop."""

    def __init__(self, url: str, token: str | None) -> None:
        self.url = url
        self._token = token
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"Connection(url={self.url!r})"

    @classmethod
    async def open(cls, url: str, token: str | None) -> Connection:
        conn = cls(url, token)
        await conn._start()
        return conn

    async def _start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name=f"drydock-mcp {self.url}")
        try:
            await asyncio.wait_for(self._ready.wait(), CONNECT_TIMEOUT_S)
        except asyncio.TimeoutError:
            self._stop.set()
            raise ServerUnreachableError(
                f"no drydock server answers at {self.url} (no answer within {CONNECT_TIMEOUT_S:.0f} s); "
                "start one with `drydock serve --http` and pass the URL it prints and its token"
            ) from None
        if self._failure is not None:
            raise ServerUnreachableError(
                f"no drydock server answers at {self.url} ({_describe(self._failure, self._token)}); "
                "start one with `drydock serve --http` and pass the URL it prints and its token "
                "(DRYDOCK_TOKEN, or the token file it names)"
            ) from None

    async def _run(self) -> None:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        assert self._ready is not None and self._stop is not None
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else None
        try:
            async with create_mcp_http_client(headers=headers) as http:
                async with streamable_http_client(
                    self.url, http_client=http, max_sse_event_size=MAX_EVENT_BYTES
                ) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        self._session = session
                        self._ready.set()
                        # A server closes a client that sent nothing for 30 minutes (and removes
                        # its boxes): a ping now and then keeps a quiet client's boxes, say while
                        # its model thinks.
                        while not self._stop.is_set():
                            try:
                                await asyncio.wait_for(self._stop.wait(), KEEPALIVE_S)
                            except asyncio.TimeoutError:
                                try:
                                    await asyncio.wait_for(session.send_ping(), 30)
                                except Exception:  # noqa: BLE001 - a failing call reports it
                                    pass
        except BaseException as error:  # noqa: BLE001 - reported to whoever waits
            if isinstance(error, asyncio.CancelledError) and self._ready.is_set():
                raise
            self._failure = error
        finally:
            self._session = None
            self._ready.set()

    @property
    def closed(self) -> bool:
        return self._session is None

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout_s: float,
        on_progress: ProgressFn | None = None,
    ) -> dict[str, Any]:
        """Calls a tool and returns its structured reply; a tool error is raised as its class."""
        session = self._session
        if session is None:
            raise ServerUnreachableError(
                f"the connection to {self.url} is closed"
                + (f" ({_describe(self._failure, self._token)})" if self._failure else "")
                + "; open a new Drydock to continue (the server removed this connection's boxes)"
            )

        async def progress(_p: float, _total: float | None, message: str | None) -> None:
            if on_progress is not None and message:
                on_progress(message)

        from datetime import timedelta

        try:
            reply = await session.call_tool(
                name,
                arguments,
                read_timeout_seconds=timedelta(seconds=timeout_s) if _wants_timedelta() else timeout_s,
                progress_callback=progress if on_progress is not None else None,
                meta=REPLY_META,
            )
        except asyncio.CancelledError:
            raise
        except DrydockError:
            raise
        except BaseException as error:  # noqa: BLE001
            text = _describe(error, self._token)
            if "413" in text:
                raise LimitExceededError(
                    f"{name}: the request is larger than the server at {self.url} takes ({text}); "
                    "a drydock server takes requests up to 4 MiB: write a large file in parts"
                ) from None
            if _NO_TOOL.search(text):
                raise ToolUnavailableError(
                    f"{name}: the server does not serve this tool ({text}); start it with "
                    "`drydock serve --http --tools core,checkpoints` (or a set that has it)"
                ) from None
            raise ServerUnreachableError(f"{name} at {self.url} failed: {text}") from None
        data = reply.model_dump() if hasattr(reply, "model_dump") else dict(reply)
        texts = [
            block.get("text", "")
            for block in data.get("content") or []
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        text = "\n".join(t for t in texts if t)
        if data.get("is_error") or data.get("isError"):
            if _NO_TOOL.search(text) and not (data.get("meta") or {}).get("drydock/error"):
                raise ToolUnavailableError(
                    f"{name}: the server does not serve this tool ({redact(text, self._token)}); start it with "
                    "`drydock serve --http --tools core,checkpoints` (or a set that has it)"
                )
            raise error_from_reply(redact(text, self._token), data.get("meta") or data.get("_meta"))
        structured = data.get("structured_content") or data.get("structuredContent")
        if isinstance(structured, dict):
            return structured
        import json

        try:
            parsed = json.loads(text)
        except ValueError:
            return {"text": text}
        return parsed if isinstance(parsed, dict) else {"value": parsed}

    async def close(self) -> None:
        """Ends the MCP session (the server removes every box still open in it)."""
        if self._stop is not None:
            self._stop.set()
        task = self._task
        if task is not None and not task.done():
            if asyncio.get_running_loop() is self.loop:
                try:
                    await asyncio.wait_for(asyncio.shield(task), 30)
                except (asyncio.TimeoutError, Exception):  # noqa: BLE001
                    task.cancel()
            else:
                assert self.loop is not None
                fut = asyncio.run_coroutine_threadsafe(_await(task), self.loop)
                await asyncio.wrap_future(fut)


async def _await(task: asyncio.Task[None]) -> None:
    try:
        await task
    except BaseException:  # noqa: BLE001
        pass


def _wants_timedelta() -> bool:
    import inspect

    from mcp import ClientSession

    annotation = str(inspect.signature(ClientSession.call_tool).parameters["read_timeout_seconds"].annotation)
    return "timedelta" in annotation
