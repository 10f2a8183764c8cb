"""The values the client's verbs return."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class CommandResult:
    """A command's outcome, as the ``bash`` tool reports it."""

    exit_code: int | None
    """The exit status; ``None`` when the command was stopped (timed out or cancelled)."""
    stdout: str
    stderr: str
    output: str = ""
    """``stdout + stderr``: the reply carries each stream once, apart, and no merged copy."""
    timed_out: bool = False
    truncated: bool = False
    """A stream was longer than the cap: its head and tail were kept."""
    restarted: bool = False
    note: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class SessionInfo:
    id: str
    repo: str
    base_commit: str
    image: str
    box: str
    created_at: str = ""
    limits: dict[str, Any] = field(default_factory=dict)
    egress: dict[str, Any] = field(default_factory=dict)

    @property
    def command_timeout_s(self) -> int:
        return int(self.limits.get("command_timeout_s", 120))

    @property
    def max_output_bytes(self) -> int:
        return int(self.limits.get("max_output_bytes", 30_000))


@dataclass(frozen=True)
class Diff:
    diff: str
    stat: str
    base_commit: str


@dataclass(frozen=True)
class AppliedChanges:
    mode: Literal["branch", "worktree"]
    files: list[dict[str, Any]]
    stat: dict[str, Any]
    branch: str | None = None
    commit: str | None = None
    warnings: list[str] = field(default_factory=list)
    message: str | None = None


@dataclass(frozen=True)
class Checkpoint:
    name: str
    created_at: str
    age_s: float
    bytes: int
    changed_files: int
    include_ignored: bool
    message: str | None = None
    cwd: str | None = None


@dataclass(frozen=True)
class RestoredCheckpoint:
    name: str
    changed_files: int
    cwd: str | None = None
