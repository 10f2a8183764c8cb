"""drydock's errors, one class per code the server sends.

A tool error comes back from the server with its code and class in the reply's ``_meta``
(``drydock/error``); the client raises the matching class with the server's message, which names
what was wrong and what to do next. A server that sends no code gives a ``DrydockError`` with
code ``tool_error``.

Some classes also derive from the built-in exception a Python caller would catch for the same
failure (``FileNotFoundError`` for ``not_found``, ``PermissionError`` for a path outside the
workspace, ``TimeoutError`` for a command timeout), so ``except FileNotFoundError`` works too.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApplyConflictError",
    "BinaryFileError",
    "BoxGoneError",
    "CheckpointDamagedError",
    "CommandTimeoutError",
    "DrydockError",
    "EngineUnavailableError",
    "ImageMissingError",
    "InvalidArgumentError",
    "IsDirectoryError",
    "LimitExceededError",
    "NotFoundError",
    "PathOutsideWorkspaceError",
    "PermissionDeniedError",
    "ServerStartError",
    "ServerUnreachableError",
    "SessionNotFoundError",
    "ToolUnavailableError",
    "UnsafeDiffError",
    "error_from_reply",
]


class DrydockError(Exception):
    """Base class: ``code`` is the server's error code (``invalid_argument``, ``not_found``, …)."""

    code: str = "tool_error"

    def __init__(self, message: str, *, code: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.field = field

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"

    # OSError subclasses take their arguments positionally on unpickling; keep the message.
    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.code, self.field))


def _rebuild(cls: type[DrydockError], message: str, code: str, field: str | None) -> DrydockError:
    return cls(message, code=code, field=field)


class InvalidArgumentError(DrydockError, ValueError):
    """Bad input; ``field`` names the argument (in the server's parameter names)."""

    code = "invalid_argument"


class IsDirectoryError(InvalidArgumentError, IsADirectoryError):
    """A path names a directory where a file was wanted."""


class PathOutsideWorkspaceError(DrydockError, PermissionError):
    """A path leaves ``/workspace``, also through a symlink; use a path under it or relative to it."""

    code = "path_outside_workspace"


class NotFoundError(DrydockError, FileNotFoundError):
    """No such file or directory."""

    code = "not_found"


class BinaryFileError(DrydockError):
    """A text read of a file that is not text; read it with ``read_bytes``."""

    code = "binary_file"


class LimitExceededError(DrydockError):
    """A limit was reached: a file too large, a request over the server's body limit, no room
    for another session (the server's admission)."""

    code = "limit_exceeded"


class PermissionDeniedError(DrydockError, PermissionError):
    """The box user may not read or write that path (outside ``/workspace``, as root owns it)."""

    code = "permission_denied"


class SessionNotFoundError(DrydockError):
    """The session is gone: closed, or its client's MCP session ended."""

    code = "session_not_found"


class ApplyConflictError(DrydockError):
    """The diff does not apply to the host repository; nothing on the host changed."""

    code = "apply_conflict"


class UnsafeDiffError(DrydockError):
    """The diff was refused before anything was applied (ignore rules, ``.git``, symlinks)."""

    code = "unsafe_diff"


class CheckpointDamagedError(DrydockError):
    """The checkpoint's data in the box was changed; nothing was restored."""

    code = "checkpoint_damaged"


class BoxGoneError(DrydockError):
    """The box was stopped or removed outside drydock."""

    code = "box_gone"


class EngineUnavailableError(DrydockError):
    """The server reaches no Docker Engine (or cluster)."""

    code = "engine_unavailable"


class ImageMissingError(DrydockError):
    """The box image is not present; build it with ``drydock image build``."""

    code = "image_missing"


class CommandTimeoutError(DrydockError, TimeoutError):
    """A command ran past its time limit and was stopped as a whole."""

    code = "command_timeout"


class ServerUnreachableError(DrydockError, ConnectionError):
    """Nothing answers at the URL, the token is wrong, or the connection broke during a call."""

    code = "server_unreachable"


class ServerStartError(DrydockError):
    """``Drydock.local()`` could not start ``drydock serve --http``; the message has its log."""

    code = "server_start"


class ToolUnavailableError(DrydockError):
    """The server does not serve a tool this call needs (start it with more ``--tools``)."""

    code = "tool_unavailable"


_BY_NAME: dict[str, type[DrydockError]] = {
    "InvalidArgumentError": InvalidArgumentError,
    "FlagError": InvalidArgumentError,
    "IsDirectoryError": IsDirectoryError,
    "PathOutsideWorkspaceError": PathOutsideWorkspaceError,
    "NotFoundError": NotFoundError,
    "BinaryFileError": BinaryFileError,
    "LimitExceededError": LimitExceededError,
    "SessionNotFoundError": SessionNotFoundError,
    "ApplyConflictError": ApplyConflictError,
    "UnsafeDiffError": UnsafeDiffError,
    "CheckpointDamagedError": CheckpointDamagedError,
    "BoxGoneError": BoxGoneError,
    "EngineUnavailableError": EngineUnavailableError,
    "ImageMissingError": ImageMissingError,
    "CommandTimeoutError": CommandTimeoutError,
}

_BY_CODE: dict[str, type[DrydockError]] = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        PathOutsideWorkspaceError,
        NotFoundError,
        BinaryFileError,
        LimitExceededError,
        SessionNotFoundError,
        ApplyConflictError,
        UnsafeDiffError,
        CheckpointDamagedError,
        BoxGoneError,
        EngineUnavailableError,
        ImageMissingError,
        CommandTimeoutError,
    )
}


def error_from_reply(message: str, meta: Any) -> DrydockError:
    """The error an ``isError`` tool reply stands for, from its ``_meta["drydock/error"]``."""
    info = meta.get("drydock/error") if isinstance(meta, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("code"), str):
        return DrydockError(message)
    code: str = info["code"]
    field = info.get("field") if isinstance(info.get("field"), str) else None
    cls = _BY_NAME.get(str(info.get("name"))) or _BY_CODE.get(code) or DrydockError
    return cls(message, code=code, field=field)
