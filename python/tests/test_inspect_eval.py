"""An Inspect eval (mockllm/model scripted per sample) whose solver uses bash(), python() and
text_editor() in sandbox="drydock", samples in parallel, scored; then the same eval on Inspect's
own docker sandbox, which must give the same scores."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES))

EXPECTED = {"a": "C", "b": "C", "c": "C", "d": "C", "wrong": "I"}


def _scores(log) -> dict[str, str]:
    return {str(s.id): s.scores["sum_in_box"].value for s in log.samples}


def _overlapping(log) -> int:
    """The most samples running at one time."""
    spans = [(s.started_at, s.completed_at) for s in log.samples]
    return max(sum(1 for a, b in spans if a <= start < b) for start, _ in spans)


@pytest.fixture(scope="module")
def drydock_log(state_dir: str, tmp_path_factory):
    from inspect_ai import eval as inspect_eval
    from inspect_task import sums

    os.environ["DRYDOCK_INSPECT_STATE_DIR"] = state_dir
    logs = inspect_eval(
        sums(sandbox_spec="drydock"),
        max_samples=5,
        max_sandboxes=5,
        log_dir=str(tmp_path_factory.mktemp("logs")),
        display="none",
    )
    return logs[0]


def test_eval_in_drydock_boxes(drydock_log, state_dir: str) -> None:
    log = drydock_log
    assert log.status == "success", log.error
    assert _scores(log) == EXPECTED
    assert _overlapping(log) >= 2, "the samples did not run in parallel"
    for sample in log.samples:
        tools = [m for m in sample.messages if m.role == "tool"]
        assert [m.function for m in tools] == ["bash", "python", "text_editor", "text_editor"]
        assert all(m.error is None for m in tools), [m.error for m in tools]
        assert tools[0].text.endswith("no-tty\n")  # exec gives plain pipes, as docker exec does
    # task_cleanup stopped the server: its boxes are gone.
    from conftest import boxes_of

    assert boxes_of(state_dir) == []


def test_same_scores_on_inspects_docker_sandbox(drydock_log, tmp_path_factory) -> None:
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode != 0:
        pytest.fail("docker compose is missing: scripts/install-python-package.sh installs it")
    import inspect_ai.util._sandbox.docker.prereqs as prereqs
    from inspect_ai import eval as inspect_eval
    from inspect_task import sums

    # Inspect's docker sandbox gates on Docker Engine 24.0.6; this machine's engine is Debian 12's
    # 20.10, which runs these containers as well. Only that version gate is relaxed here.
    original = prereqs.validate_docker_engine

    async def engine_20_10(version: str = "20.10.0") -> None:
        await original("20.10.0")

    prereqs.validate_docker_engine = engine_20_10
    try:
        logs = inspect_eval(
            sums(sandbox_spec="docker", config=str(FIXTURES / "compose.yaml")),
            max_samples=5,
            log_dir=str(tmp_path_factory.mktemp("docker-logs")),
            display="none",
        )
    finally:
        prereqs.validate_docker_engine = original
    log = logs[0]
    assert log.status == "success", log.error
    assert _scores(log) == _scores(drydock_log) == EXPECTED
    # The tools said the same things in both sandboxes.
    for ours, theirs in zip(sorted(drydock_log.samples, key=lambda s: s.id), sorted(log.samples, key=lambda s: s.id)):
        assert [m.text for m in ours.messages if m.role == "tool"] == [m.text for m in theirs.messages if m.role == "tool"]
