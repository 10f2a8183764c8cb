"""Inspect's own conformance suite for sandbox providers (inspect_ai.util._sandbox.self_check),
run against sandbox="drydock": the same checks Inspect runs on its docker and local sandboxes."""

from __future__ import annotations

import os

import pytest

from inspect_ai.util._sandbox.self_check import *  # noqa: F403

from drydock.inspect_sandbox import DrydockSandboxConfig, DrydockSandboxEnvironment

# Checks a drydock box cannot pass, and why.
KNOWN: dict[str, str] = {
    "test_exec_as_user": "a drydock box has no root (non-root user, every capability dropped, "
    "no-new-privileges): exec(user=...) raises SandboxUserUnsupportedError, as Inspect asks",
}


@pytest.fixture(scope="module")
async def drydock_sample(state_dir: str):
    os.environ["DRYDOCK_INSPECT_STATE_DIR"] = state_dir
    config = DrydockSandboxConfig(state_dir=state_dir)
    await DrydockSandboxEnvironment.task_init("conformance", config)
    environments = await DrydockSandboxEnvironment.sample_init("conformance", config, {})
    yield environments["default"]
    await DrydockSandboxEnvironment.sample_cleanup("conformance", config, environments, False)
    await DrydockSandboxEnvironment.task_cleanup("conformance", config, True)


@pytest.fixture
async def sandbox_env(drydock_sample, request):
    reason = KNOWN.get(request.node.originalname)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    yield drydock_sample


async def test_no_network_unless_the_config_names_hosts(drydock_sample, state_dir: str) -> None:
    assert drydock_sample.box.info.egress["allowlist"] == []
    offline = await drydock_sample.exec(["bash", "-c", "curl -sS -m 5 https://pypi.org >/dev/null 2>&1 || echo offline"])
    assert offline.stdout == "offline\n"
    config = DrydockSandboxConfig(state_dir=state_dir, egress=["pypi"])
    await DrydockSandboxEnvironment.task_init("egress", config)
    try:
        environments = await DrydockSandboxEnvironment.sample_init("egress", config, {})
        box = environments["default"].box
        assert "pypi.org" in box.info.egress["allowlist"]
        await DrydockSandboxEnvironment.sample_cleanup("egress", config, environments, False)
    finally:
        await DrydockSandboxEnvironment.task_cleanup("egress", config, True)


async def test_a_compose_file_is_refused_naming_what_the_provider_takes(tmp_path) -> None:
    import pytest

    compose = tmp_path / "compose.yaml"
    compose.write_text("services:\n  default:\n    image: x\n")
    with pytest.raises(ValueError, match="Dockerfile"):
        await DrydockSandboxEnvironment.task_init("compose", str(compose))
