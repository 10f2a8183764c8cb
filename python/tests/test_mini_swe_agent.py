"""mini-swe-agent's agent loop (DefaultAgent, its default config) with a scripted model solves a
fixture task in a drydock box: the bug is fixed, the tests pass in the box, and the diff is the fix."""

from __future__ import annotations

from pathlib import Path

import yaml

from conftest import make_repo


def test_mini_swe_agent_solves_a_task_in_a_drydock_box(workdir: Path, state_dir: str) -> None:
    from minisweagent import package_dir
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.models.test_models import DeterministicModel, make_output

    from drydock.mini_swe_agent import DrydockEnvironment

    repo = make_repo(
        workdir / "mswea-task",
        {
            "calc.py": "def add(a, b):\n    return a - b\n",
            "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
    )
    steps = [
        ("Run the tests first.", "python3 -m pytest -q test_calc.py; echo exit=$?"),
        ("Fix the operator.", "sed -i 's/a - b/a + b/' calc.py && cat calc.py"),
        ("Check: no network either.", "python3 -m pytest -q test_calc.py && (curl -sS -m 5 https://pypi.org >/dev/null 2>&1 || echo no-network)"),
        ("Submit.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"),
    ]
    model = DeterministicModel(
        outputs=[make_output(f"THOUGHT: {text}\n\n```mswea_bash_command\n{cmd}\n```", [{"command": cmd}]) for text, cmd in steps]
    )
    config = yaml.safe_load((Path(package_dir) / "config" / "default.yaml").read_text())
    env = DrydockEnvironment(repo=str(repo), state_dir=state_dir, timeout=60)
    try:
        agent = DefaultAgent(model, env, **config["agent"])
        result = agent.run("Make the tests in test_calc.py pass.")
        outputs = [m["content"] for m in agent.messages if m.get("role") == "user"][1:]
        assert "exit=1" in outputs[0] and "1 failed" in outputs[0]
        assert "a + b" in outputs[1]
        assert "1 passed" in outputs[2] and "no-network" in outputs[2]
        assert result["exit_status"] == "Submitted"
        assert "-    return a - b\n+    return a + b" in result["submission"]
        # The host repository is untouched until the diff is applied.
        assert (repo / "calc.py").read_text().endswith("a - b\n")
        assert "+    return a + b" in env.box.diff().diff
        assert env.serialize()["info"]["config"]["environment_type"] == "drydock.mini_swe_agent.DrydockEnvironment"
    finally:
        env.cleanup()


def test_the_token_stays_out_of_the_config_record() -> None:
    from drydock.mini_swe_agent import DrydockEnvironment, DrydockEnvironmentConfig

    config = DrydockEnvironmentConfig(url="http://127.0.0.1:9/mcp", token="sekrit-token")
    assert "sekrit-token" not in repr(config)
    env = DrydockEnvironment.__new__(DrydockEnvironment)
    env.config = config
    assert "sekrit-token" not in repr(env.serialize()) and "sekrit-token" not in repr(env.get_template_vars())
