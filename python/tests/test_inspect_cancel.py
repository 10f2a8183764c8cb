"""Cleanup on cancel and on interrupt: a sample stopped by its time limit, and an eval stopped
with Ctrl-C (SIGINT to its process group), leave no box behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import boxes_of

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES))


def test_a_sample_past_its_time_limit_is_cancelled_and_its_box_removed(state_dir: str, tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_slow_task import slow

    os.environ["DRYDOCK_INSPECT_STATE_DIR"] = state_dir
    started = time.monotonic()
    (log,) = inspect_eval(slow(time_limit=8), max_samples=3, log_dir=str(tmp_path), display="none")
    assert time.monotonic() - started < 100  # not the 120 s the command would take
    assert log.status == "success", log.error
    for sample in log.samples:
        assert sample.limit is not None and sample.limit.type in ("time", "working"), sample.limit
    assert boxes_of(state_dir) == []


def test_ctrl_c_removes_every_box(state_dir: str, tmp_path: Path) -> None:
    env = {**os.environ, "DRYDOCK_INSPECT_STATE_DIR": state_dir, "PYTHONPATH": str(FIXTURES)}
    child = subprocess.Popen(
        [sys.executable, str(FIXTURES / "inspect_slow_task.py"), str(tmp_path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, as a terminal's job
    )
    try:
        deadline = time.monotonic() + 240
        while len(boxes_of(state_dir)) < 3:
            assert child.poll() is None, child.stdout.read().decode() if child.stdout else ""
            assert time.monotonic() < deadline, "the samples' boxes did not start"
            time.sleep(0.5)
        time.sleep(3)  # the commands run
        os.killpg(child.pid, signal.SIGINT)
        child.wait(120)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while boxes_of(state_dir) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert boxes_of(state_dir) == []
