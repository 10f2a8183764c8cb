"""A Harbor-format task (environment/Dockerfile, tests/test.sh, solution/solve.sh) in a drydock
box, through drydock's own adapter: its tests fail as the task starts and pass with the fix."""

from __future__ import annotations

from pathlib import Path

from drydock import Drydock
from drydock.harbor import build_task_image, oracle, run_task

TASK = Path(__file__).parent / "fixtures" / "harbor" / "fix-wordcount"


def test_harbor_task_fails_without_the_fix_and_passes_with_it(state_dir: str) -> None:
    image, workdir = build_task_image(TASK, state_dir=state_dir)
    assert workdir == "/app"
    with Drydock.local(image=image, state_dir=state_dir, pool=0) as dd:
        unsolved = run_task(TASK, None, drydock=dd)
        assert unsolved.reward == 0.0, unsolved.verifier_output
        assert "2 failed" in unsolved.verifier_output

        solved = run_task(TASK, oracle, drydock=dd)
        assert solved.reward == 1.0, solved.verifier_output
        assert "2 passed" in solved.verifier_output
        assert '-    return len(text.split(" "))' in solved.diff and "+    return len(text.split())" in solved.diff

        def agent(box, instruction: str, task_dir: Path) -> str:
            # An agent that reads the instruction and works where it says: /app is the workspace.
            assert "/app/wordcount.py" in instruction
            before = box.run(["python3", "/app/wordcount.py", "/app/sample.txt"], tty=False).stdout
            text = box.read_text("wordcount.py").replace('text.split(" ")', "text.split()")
            box.write_text("wordcount.py", text)
            return before

        by_agent = run_task(TASK, agent, drydock=dd)
        assert by_agent.agent_output.strip() != "9" and by_agent.reward == 1.0
        # No network in the box, as the task's tests expect of a fresh container here.
        with dd.create() as box:
            assert box.run("curl -sS -m 5 https://pypi.org >/dev/null 2>&1 || echo offline").stdout == "offline\n"
