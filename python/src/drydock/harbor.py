"""Harbor (terminal-bench) tasks in a drydock box: drydock's own adapter.

A Harbor task is a directory: ``instruction.md``, ``task.toml``, ``environment/Dockerfile``,
``tests/test.sh`` (it writes the reward to ``/logs/verifier/reward.txt``) and optionally
``solution/solve.sh``. ``run_task`` builds the environment into a box image, runs an agent (any
callable given the sandbox and the instruction; ``oracle`` runs the task's own solution), then
uploads ``tests/`` to ``/tests`` and runs ``test.sh`` as Harbor's verifier does, and returns the
reward.

A drydock box's root file system is read-only and only ``/workspace`` and ``/tmp`` are writable,
so the image gets one more layer: the task's working directory (its last ``WORKDIR``) is kept
under ``/opt/drydock-harbor/workdir`` and becomes a link to ``/workspace``, where it is copied at
start; ``/tests``, ``/logs`` and ``/solution`` are links into ``/tmp/drydock-harbor``. The
Dockerfile must build on an image a box can run (``FROM ${DRYDOCK_SANDBOX}``, or an image the
operator allows that holds bash, coreutils, git and procps) and ends as the box user.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._images import build_environment_image
from ._sync import Drydock, Sandbox
from .errors import DrydockError

_LAYER = """
# drydock: the task's working directory and Harbor's paths, writable in a read-only box
USER root
RUN mkdir -p /opt/drydock-harbor/workdir \\
 && if [ -d {workdir} ]; then cp -a {workdir}/. /opt/drydock-harbor/workdir/ && rm -rf {workdir}; fi \\
 && mkdir -p "$(dirname {workdir})" && ln -sfn /workspace {workdir} \\
 && for d in tests logs solution; do rm -rf "/$d" && ln -s "/tmp/drydock-harbor/$d" "/$d"; done
USER {user}
WORKDIR /workspace
"""


@dataclass
class HarborResult:
    reward: float
    verifier_exit_code: int | None
    verifier_output: str
    agent_output: str = ""
    diff: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        return {}
    return tomllib.loads(path.read_text()) if path.is_file() else {}


def _workdir(dockerfile: str) -> str:
    found = re.findall(r"^\s*WORKDIR\s+(\S+)\s*$", dockerfile, re.MULTILINE | re.IGNORECASE)
    return found[-1] if found else "/app"


def build_task_image(task_dir: str | Path, *, user: str = "agent", cli: str | None = None, state_dir: str | None = None) -> tuple[str, str]:
    """Builds the task's environment with drydock's layer; returns (image, the task's workdir)."""
    source = Path(task_dir) / "environment"
    dockerfile = source / "Dockerfile"
    if not dockerfile.is_file():
        raise DrydockError(f"{dockerfile}: a Harbor task's environment/Dockerfile is missing", code="invalid_argument")
    work = Path(tempfile.mkdtemp(prefix="drydock-harbor-env-"))
    try:
        shutil.copytree(source, work, dirs_exist_ok=True)
        text = dockerfile.read_text()
        workdir = _workdir(text)
        (work / "Dockerfile").write_text(text.rstrip("\n") + "\n" + _LAYER.format(workdir=workdir, user=user))
        return build_environment_image(str(work / "Dockerfile"), cli=cli, state_dir=state_dir), workdir
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _upload_dir(box: Sandbox, local: Path, target: str) -> None:
    for path in sorted(local.rglob("*")):
        if path.is_file():
            rel = path.relative_to(local).as_posix()
            box._loop.run(box._inner._write(f"{target}/{rel}", path.read_bytes(), confine=False))


def oracle(box: Sandbox, instruction: str, task_dir: Path) -> str:
    """The task's own solution: ``solution/`` uploaded to ``/solution``, ``solve.sh`` run."""
    _upload_dir(box, task_dir / "solution", "/solution")
    result = box.run(["bash", "/solution/solve.sh"], cwd="/workspace", timeout=600, tty=False)
    return result.stdout + result.stderr


def run_task(
    task_dir: str | Path,
    agent: Callable[[Sandbox, str, Path], str] | None = None,
    *,
    drydock: Drydock | None = None,
    cli: str | None = None,
    state_dir: str | None = None,
) -> HarborResult:
    """Runs one Harbor task in a drydock box and returns the verifier's reward.

    ``agent(box, instruction, task_dir)`` does the work (``None``: nothing, so the tests see the
    task as it starts; ``oracle``: the task's solution). ``drydock``: a ``Drydock`` whose server
    was started on the task's image (else one is started here, and stopped at the end).
    """
    task = Path(task_dir).resolve()
    config = _toml(task / "task.toml")
    verifier = config.get("verifier", {})
    environment = config.get("environment", {})
    instruction = (task / "instruction.md").read_text() if (task / "instruction.md").is_file() else ""
    image, _workdir_path = build_task_image(task, cli=cli, state_dir=state_dir)
    own = drydock is None
    dd = drydock or Drydock.local(
        image=image,
        cli=cli,
        state_dir=state_dir,
        pool=0,
        memory_mb=int(environment["memory_mb"]) if "memory_mb" in environment else None,
        cpus=float(environment["cpus"]) if "cpus" in environment else None,
    )
    try:
        with dd.create(image=image if not own else None) as box:
            start = box.run(
                "mkdir -p /tmp/drydock-harbor/tests /tmp/drydock-harbor/logs/verifier "
                "/tmp/drydock-harbor/logs/agent /tmp/drydock-harbor/solution "
                "&& cp -a /opt/drydock-harbor/workdir/. /workspace/ "
                # The task's files as a commit, so the agent's change is a plain git diff.
                "&& git -C /workspace add -A && git -C /workspace -c user.name=drydock "
                "-c user.email=drydock@localhost commit -qm 'the task' --allow-empty",
                tty=False,
            )
            if start.exit_code != 0:
                raise DrydockError(f"preparing the task's box failed: {start.stderr}", code="command_exit")
            agent_output = agent(box, instruction, task) if agent is not None else ""
            _upload_dir(box, task / "tests", "/tests")
            env = {str(k): str(v) for k, v in (verifier.get("env") or {}).items()}
            result = box.run(
                ["bash", "/tests/test.sh"],
                cwd="/workspace",
                env=env or None,
                timeout=float(verifier.get("timeout_sec", 600)),
                tty=False,
            )
            reward_text = box.run(
                "cat /logs/verifier/reward.txt 2>/dev/null || cat /logs/verifier/reward.json 2>/dev/null", tty=False
            ).stdout.strip()
            reward = _reward(reward_text)
            return HarborResult(
                reward=reward,
                verifier_exit_code=result.exit_code,
                verifier_output=result.stdout + result.stderr,
                agent_output=agent_output,
                diff=box.run("git -C /workspace add -A && git -C /workspace diff --cached HEAD", tty=False).stdout,
            )
    finally:
        if own:
            dd.close()


def _reward(text: str) -> float:
    if not text:
        return 0.0
    if text.startswith("{"):
        import json

        data = json.loads(text)
        values = [float(v) for v in data.values() if isinstance(v, (int, float))]
        return values[0] if len(values) == 1 else float(data.get("reward", 0.0))
    return float(text.split()[0])
