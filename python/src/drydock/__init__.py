"""drydock from Python: hardened, networkless boxes for coding agents and evaluations.

A client of ``drydock serve --http`` (its MCP API): ``Drydock`` (sync) and ``AsyncDrydock``
make sandboxes on a repository, a directory or an image; a sandbox runs commands, reads and
writes files, gives its diff, applies it, checkpoints, restores and forks.

    from drydock import Drydock

    with Drydock.local() as dd:
        box = dd.create(repo="/path/to/repo")
        result = box.run(["python3", "-m", "pytest", "-q"], timeout=600)
        print(result.exit_code, result.stdout)
        print(box.diff().diff)

Also: an Inspect AI sandbox provider (``sandbox="drydock"``, see ``drydock.inspect_sandbox``)
and a mini-swe-agent environment (``drydock.mini_swe_agent``).
"""

from ._client import AsyncDrydock, AsyncSandbox
from ._local import LocalServer
from ._sync import Drydock, Sandbox
from ._types import AppliedChanges, Checkpoint, CommandResult, Diff, RestoredCheckpoint, SessionInfo
from .errors import (
    ApplyConflictError,
    BinaryFileError,
    BoxGoneError,
    CheckpointDamagedError,
    CommandTimeoutError,
    DrydockError,
    EngineUnavailableError,
    ImageMissingError,
    InvalidArgumentError,
    IsDirectoryError,
    LimitExceededError,
    NotFoundError,
    PathOutsideWorkspaceError,
    PermissionDeniedError,
    ServerStartError,
    ServerUnreachableError,
    SessionNotFoundError,
    ToolUnavailableError,
    UnsafeDiffError,
)

__version__ = "0.1.0"

__all__ = [
    "AppliedChanges",
    "ApplyConflictError",
    "AsyncDrydock",
    "AsyncSandbox",
    "BinaryFileError",
    "BoxGoneError",
    "Checkpoint",
    "CheckpointDamagedError",
    "CommandResult",
    "CommandTimeoutError",
    "Diff",
    "Drydock",
    "DrydockError",
    "EngineUnavailableError",
    "ImageMissingError",
    "InvalidArgumentError",
    "IsDirectoryError",
    "LimitExceededError",
    "LocalServer",
    "NotFoundError",
    "PathOutsideWorkspaceError",
    "PermissionDeniedError",
    "RestoredCheckpoint",
    "Sandbox",
    "ServerStartError",
    "ServerUnreachableError",
    "SessionInfo",
    "SessionNotFoundError",
    "ToolUnavailableError",
    "UnsafeDiffError",
]
