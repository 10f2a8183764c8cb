"""Fixtures: a real ``drydock serve --http`` from this checkout (``dist/cli/main.js``), with a state
directory of its own, and host repositories to copy in. Every box the tests make is gone at the
end (the server removes its boxes when it stops; the last fixture checks the engine)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# The fixtures hold other frameworks' tests (a Harbor task's), run in boxes, not here.
collect_ignore_glob = ["fixtures/*"]

CHECKOUT = Path(__file__).resolve().parents[2]
CLI = os.environ.get("DRYDOCK_TEST_CLI") or str(CHECKOUT / "dist" / "cli" / "main.js")
os.environ["DRYDOCK_CLI"] = CLI

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


def git(repo: Path | str, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=GIT_ENV).stdout


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def boxes_of(state_dir: str) -> list[str]:
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=drydock.state={os.path.realpath(state_dir)}"],
        capture_output=True,
        text=True,
    ).stdout
    return out.split()


@pytest.fixture(scope="session")
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="drydock-pytest-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def host_repo(workdir: Path) -> Path:
    return make_repo(
        workdir / "app",
        {
            "README.md": "# app\n",
            "calc.py": "def add(a, b):\n    return a - b\n",
            ".gitignore": "*.log\n",
        },
    )


@pytest.fixture(scope="session")
def other_repo(workdir: Path) -> Path:
    return make_repo(workdir / "other", {"other.txt": "other\n"})


@pytest.fixture(scope="session")
def state_dir(workdir: Path) -> Iterator[str]:
    path = str(workdir / "state")
    yield path
    # Nothing of the tests' is left on the engine once their servers stopped.
    left = boxes_of(path)
    if left:
        subprocess.run(["docker", "rm", "-f", *left], capture_output=True)
        pytest.fail(f"boxes left on the engine after the tests: {left}")


@pytest.fixture(scope="session")
def drydock(host_repo: Path, other_repo: Path, state_dir: str):
    from drydock import Drydock

    dd = Drydock.local(state_dir=state_dir, repo=str(host_repo), allow_repos=[str(other_repo)], pool=0)
    yield dd
    dd.close()
