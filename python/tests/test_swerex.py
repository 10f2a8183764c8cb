"""SWE-ReX on drydock: DrydockDeployment / DrydockRuntime against a real `drydock serve --http` and
the real swe-rex models and errors: every runtime method, its errors, the session's state, no
network, cleanup on stop, and what an untrusted agent's commands could try.

DRYDOCK_TEST_RUNTIME=runsc runs the same tests with the boxes under gVisor."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from drydock.swerex import (
    DrydockDeployment,
    DrydockRuntime,
    DrydockSessionLimitError,
    DrydockUnsupportedError,
)
from swerex.exceptions import (
    BashIncorrectSyntaxError,
    CommandTimeoutError,
    DeploymentNotStartedError,
    NonZeroExitCodeError,
    SessionDoesNotExistError,
    SessionExistsError,
)
from swerex.runtime.abstract import (
    BashAction,
    BashInterruptAction,
    CloseBashSessionRequest,
    Command,
    CreateBashSessionRequest,
    ReadFileRequest,
    UploadRequest,
    WriteFileRequest,
)

RUNTIME = os.environ.get("DRYDOCK_TEST_RUNTIME") or None


def containers_of_session(session_id: str) -> list[str]:
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=drydock.session={session_id}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


@pytest.fixture(scope="module")
def deployment(host_repo: Path, state_dir: str) -> Iterator[DrydockDeployment]:
    # Each call on its own event loop, as SWE-agent drives a deployment (asyncio.run per call).
    dep = DrydockDeployment(repo=str(host_repo), state_dir=state_dir, container_runtime=RUNTIME)
    asyncio.run(dep.start())
    yield dep
    asyncio.run(dep.stop())


@pytest.fixture
def runtime(deployment: DrydockDeployment) -> Iterator[DrydockRuntime]:
    rt = deployment.runtime
    asyncio.run(rt.create_session(CreateBashSessionRequest(session="default")))
    yield rt
    asyncio.run(rt.close_session(CloseBashSessionRequest(session="default")))


def run(rt: DrydockRuntime, command: str, **kw):
    return asyncio.run(rt.run_in_session(BashAction(command=command, **kw)))


def test_the_session_keeps_cwd_and_variables_and_sees_the_repository(runtime: DrydockRuntime) -> None:
    assert run(runtime, "cd /tmp && export FOO=bar && x=local").exit_code == 0
    obs = run(runtime, "pwd; echo $FOO $x")
    assert obs.output.split() == ["/tmp", "bar", "local"]
    assert obs.exit_code == 0
    obs = run(runtime, "cat /workspace/calc.py")
    assert "return a - b" in obs.output
    # SWE-ReX's cleaning of terminal output: ANSI sequences gone, CRLF made LF.
    assert run(runtime, "printf '\\033[31mred\\033[0m\\r\\nnext\\n'").output == "red\nnext\n"


def test_check_raise_silent_and_ignore(runtime: DrydockRuntime) -> None:
    with pytest.raises(NonZeroExitCodeError, match=r"^failed here: Command 'echo oops; \(exit 3\)' failed with exit code 3") as info:
        run(runtime, "echo oops; (exit 3)", error_msg="failed here")
    assert "oops" in str(info.value)
    obs = run(runtime, "echo oops; (exit 3)", check="silent")
    assert (obs.exit_code, obs.output.strip()) == (3, "oops")
    obs = run(runtime, "(exit 3)", check="ignore")
    assert obs.exit_code is None


def test_a_command_past_its_timeout_raises_and_is_stopped(runtime: DrydockRuntime) -> None:
    started = time.monotonic()
    with pytest.raises(CommandTimeoutError, match="timeout after 2.0 seconds"):
        run(runtime, "sleep 1000 & sleep 999", timeout=2)
    assert time.monotonic() - started < 30
    # Nothing of it runs on; SWE-agent's interrupt is answered; the session goes on.
    assert asyncio.run(runtime.run_in_session(BashInterruptAction())).exit_code == 0
    obs = run(runtime, "pgrep -x sleep || echo none")
    assert obs.output.strip() == "none"


def test_a_syntax_error_is_refused_before_anything_runs(runtime: DrydockRuntime) -> None:
    with pytest.raises(BashIncorrectSyntaxError, match="while checking bash command") as info:
        run(runtime, "touch /tmp/ran-anyway; if then fi (")
    assert "syntax error" in info.value.extra_info["bash_stderr"]
    assert run(runtime, "test -e /tmp/ran-anyway", check="silent").exit_code == 1


def test_sessions_that_do_not_exist_exist_twice_or_a_second_shell(deployment: DrydockDeployment) -> None:
    rt = deployment.runtime
    with pytest.raises(SessionDoesNotExistError):
        run(rt, "true", session="nope")
    with pytest.raises(SessionDoesNotExistError):
        asyncio.run(rt.close_session(CloseBashSessionRequest(session="nope")))
    asyncio.run(rt.create_session(CreateBashSessionRequest(session="a")))
    try:
        with pytest.raises(SessionExistsError):
            asyncio.run(rt.create_session(CreateBashSessionRequest(session="a")))
        with pytest.raises(DrydockSessionLimitError, match="one persistent shell"):
            asyncio.run(rt.create_session(CreateBashSessionRequest(session="b")))
        run(rt, "export LEFT=over; cd /tmp", session="a")
    finally:
        asyncio.run(rt.close_session(CloseBashSessionRequest(session="a")))
    # A new session is a fresh shell.
    asyncio.run(rt.write_file(WriteFileRequest(path="/tmp/startup.sh", content="export STARTED=yes\n")))
    asyncio.run(rt.create_session(CreateBashSessionRequest(session="b", startup_source=["/tmp/startup.sh"])))
    try:
        obs = run(rt, 'pwd; echo "[$LEFT] $STARTED"', session="b")
        assert obs.output.split() == ["/workspace", "[]", "yes"]
    finally:
        asyncio.run(rt.close_session(CloseBashSessionRequest(session="b")))


def test_interactive_commands_are_refused_with_the_way_out(runtime: DrydockRuntime) -> None:
    with pytest.raises(DrydockUnsupportedError, match="non-interactively"):
        run(runtime, "python3", is_interactive_command=True)


def test_execute_is_subprocess_run(runtime: DrydockRuntime) -> None:
    rt = runtime
    # The box's own environment (not the host's, not what the session exports).
    box_env = run(rt, 'echo "$HOME:$PATH:$USER"').output
    os.environ["DRYDOCK_HOST_ONLY"] = "host"
    run(rt, "cd /tmp && export SESSION_ONLY=1 PATH=/nowhere:$PATH")
    r = asyncio.run(rt.execute(Command(command='echo "$HOME:$PATH:$USER"; echo "[$DRYDOCK_HOST_ONLY]"', shell=True)))
    assert r.stdout == box_env + "[]\n"
    r = asyncio.run(rt.execute(Command(command=["printf", "%s|", "a b", "$HOME", "*"])))
    assert (r.stdout, r.stderr, r.exit_code) == ("a b|$HOME|*|", "", 0)
    # Not in the session's cwd or variables.
    r = asyncio.run(rt.execute(Command(command='pwd; echo "[$SESSION_ONLY]"; echo err >&2; exit 4', shell=True)))
    assert (r.stdout, r.stderr, r.exit_code) == ("/workspace\n[]\n", "err\n", 4)
    r = asyncio.run(rt.execute(Command(command="echo out; echo err >&2", shell=True, merge_output_streams=True, cwd="/tmp")))
    assert (r.stdout, r.stderr) == ("out\nerr\n", "")
    r = asyncio.run(rt.execute(Command(command=["pwd"], cwd="/tmp")))
    assert r.stdout == "/tmp\n"
    # env= is the whole environment, as subprocess's.
    r = asyncio.run(rt.execute(Command(command=["/usr/bin/env"], env={"ONLY": "this"})))
    names = {line.split("=", 1)[0] for line in r.stdout.splitlines()}
    assert "ONLY=this" in r.stdout.splitlines() and "HOME" not in names and "PATH" not in names
    with pytest.raises(NonZeroExitCodeError, match=r"^why: Command 'exit 2' failed with exit code 2"):
        asyncio.run(rt.execute(Command(command="exit 2", shell=True, check=True, error_msg="why")))
    started = time.monotonic()
    with pytest.raises(CommandTimeoutError, match=r"Timeout \(1.0s\) exceeded"):
        asyncio.run(rt.execute(Command(command=["sleep", "100"], timeout=1)))
    assert time.monotonic() - started < 30


def test_files_read_write_and_their_errors(runtime: DrydockRuntime, tmp_path: Path) -> None:
    rt = runtime
    text = "héllo\r\nwörld\n"
    asyncio.run(rt.write_file(WriteFileRequest(path="/workspace/new/dir/f.txt", content=text)))
    assert asyncio.run(rt.read_file(ReadFileRequest(path="/workspace/new/dir/f.txt"))).content == text
    assert asyncio.run(rt.read_file(ReadFileRequest(path="new/dir/f.txt"))).content == text
    assert "new/dir/f.txt" in run(rt, "git status --porcelain -uall").output
    asyncio.run(rt.execute(Command(command="printf '\\377' > /tmp/bin", shell=True)))
    assert asyncio.run(rt.read_file(ReadFileRequest(path="/tmp/bin", errors="replace"))).content == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        asyncio.run(rt.read_file(ReadFileRequest(path="/tmp/bin")))
    with pytest.raises(FileNotFoundError):
        asyncio.run(rt.read_file(ReadFileRequest(path="/workspace/missing.txt")))
    with pytest.raises(IsADirectoryError):
        asyncio.run(rt.read_file(ReadFileRequest(path="/workspace/new")))
    # Outside /workspace: the box's own rules (read-only root, non-root user), never the host's.
    with pytest.raises(PermissionError):
        asyncio.run(rt.write_file(WriteFileRequest(path="/etc/evil", content="x")))
    with pytest.raises(PermissionError):
        asyncio.run(rt.read_file(ReadFileRequest(path="/etc/shadow")))
    host_target = tmp_path / "written-from-the-box"
    asyncio.run(rt.write_file(WriteFileRequest(path=str(host_target), content="in the box")))
    assert not host_target.exists()
    asyncio.run(rt.write_file(WriteFileRequest(path="/tmp/outside", content="tmp is the box's")))
    assert asyncio.run(rt.read_file(ReadFileRequest(path="/tmp/outside"))).content == "tmp is the box's"


def test_upload_a_file_and_a_directory(runtime: DrydockRuntime, tmp_path: Path) -> None:
    rt = runtime
    (tmp_path / "tool" / "bin").mkdir(parents=True)
    (tmp_path / "tool" / "bin" / "hello").write_text("#!/bin/sh\necho hello from the tool\n")
    (tmp_path / "tool" / "bin" / "hello").chmod(0o755)
    (tmp_path / "single.txt").write_text("single\n")
    asyncio.run(rt.upload(UploadRequest(source_path=str(tmp_path / "tool"), target_path="/tmp/tools/tool")))
    assert run(rt, "/tmp/tools/tool/bin/hello").output.strip() == "hello from the tool"
    with pytest.raises(FileExistsError):
        asyncio.run(rt.upload(UploadRequest(source_path=str(tmp_path / "tool"), target_path="/tmp/tools/tool")))
    asyncio.run(rt.upload(UploadRequest(source_path=str(tmp_path / "single.txt"), target_path="/tmp/tools")))
    asyncio.run(rt.upload(UploadRequest(source_path=str(tmp_path / "single.txt"), target_path="/workspace/copied.txt")))
    assert asyncio.run(rt.read_file(ReadFileRequest(path="/tmp/tools/single.txt"))).content == "single\n"
    assert asyncio.run(rt.read_file(ReadFileRequest(path="copied.txt"))).content == "single\n"


def test_the_box_has_no_network(runtime: DrydockRuntime) -> None:
    r = asyncio.run(
        runtime.execute(
            Command(
                command=["python3", "-c", "import socket; socket.create_connection(('1.1.1.1', 443), timeout=5)"],
            )
        )
    )
    assert r.exit_code != 0
    assert "Network is unreachable" in r.stderr or "OSError" in r.stderr or "timed out" in r.stderr


def test_markers_printed_by_a_command_do_not_fool_the_session(runtime: DrydockRuntime) -> None:
    # SWE-ReX's own PS1, exit-code and fallback markers, and drydock's frame markers with the
    # command's own token: output, not structure.
    fake = (
        "printf 'before\\nSHELLPS1PREFIX\\nEXITCODESTART0EXITCODEEND\\nUNIQUESTRING29234\\n'; "
        "printf '\\036DDS%s\\036mid\\036DDE%s:0\\036\\036DDKx\\036\\n' \"$DRYDOCK_COMMAND\" \"$DRYDOCK_COMMAND\"; "
        "echo after; (exit 7)"
    )
    obs = run(runtime, fake, check="silent")
    assert obs.exit_code == 7
    assert "before" in obs.output and "after" in obs.output
    assert "SHELLPS1PREFIX" in obs.output and "EXITCODESTART0EXITCODEEND" in obs.output
    assert run(runtime, "echo still; (exit 0)").output.strip() == "still"


def test_a_command_that_ends_the_shell_or_waits_for_input_does_not_end_the_session(runtime: DrydockRuntime) -> None:
    run(runtime, "cd /tmp && export KEPT=1")
    started = time.monotonic()
    obs = run(runtime, "cat; read -r line; echo read=$?", timeout=20)
    assert obs.output.strip() == "read=1"  # stdin is empty: nothing waits for a terminal
    assert time.monotonic() - started < 15
    run(runtime, "kill -9 $$", check="ignore")
    obs = run(runtime, 'pwd; echo "[$KEPT]"')
    assert obs.output.split() == ["/tmp", "[1]"]


def test_a_link_in_the_box_to_a_host_path_reads_the_box_not_the_host(runtime: DrydockRuntime, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host only\n")
    run(runtime, f"ln -sfn {secret} /workspace/leak && ln -sfn /etc/hostname /workspace/host-name")
    with pytest.raises(FileNotFoundError):
        asyncio.run(runtime.read_file(ReadFileRequest(path="/workspace/leak")))
    box_name = asyncio.run(runtime.read_file(ReadFileRequest(path="/workspace/host-name"))).content
    assert box_name == run(runtime, "cat /etc/hostname").output
    assert box_name != Path("/etc/hostname").read_text()
    run(runtime, "rm -f /workspace/leak /workspace/host-name")


def test_huge_output_is_capped_and_the_session_goes_on(deployment: DrydockDeployment, runtime: DrydockRuntime) -> None:
    started = time.monotonic()
    obs = run(runtime, "head -c 50000000 /dev/zero | tr '\\0' x; echo; echo END", timeout=120)
    assert time.monotonic() - started < 120
    assert obs.exit_code == 0
    assert len(obs.output) < 2 * deployment._config.max_output_bytes + 10_000
    assert obs.output.rstrip().endswith("END")
    assert run(runtime, "echo ok").output.strip() == "ok"


def test_stop_removes_the_box_and_is_alive_says_so(host_repo: Path, state_dir: str) -> None:
    dep = DrydockDeployment(repo=str(host_repo), state_dir=state_dir, container_runtime=RUNTIME)
    with pytest.raises(DeploymentNotStartedError):
        dep.runtime  # noqa: B018
    asyncio.run(dep.start())
    session = dep.box.id
    assert containers_of_session(session), "the box should run while the deployment does"
    engine_runtime = subprocess.run(
        ["docker", "inspect", "--format", "{{.HostConfig.Runtime}}", *containers_of_session(session)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert engine_runtime == [RUNTIME or "runc"]
    assert asyncio.run(dep.is_alive()).is_alive
    assert asyncio.run(dep.is_alive(timeout=10)).is_alive
    asyncio.run(dep.stop())
    assert containers_of_session(session) == []
    with pytest.raises(DeploymentNotStartedError):
        asyncio.run(dep.is_alive())
    asyncio.run(dep.stop())  # twice is fine


def test_swe_agent_s_environment_calls_in_its_order(host_repo: Path, state_dir: str) -> None:
    """The calls SWE-agent's SWEEnv makes (start, a session sourcing /root/.bashrc, LANG exported,
    `cd /`, commands with check="silent", a file written and read, close), each through its own
    asyncio.run as SWEEnv makes them; SWE-agent itself is not on PyPI (docs/swe-rex.md)."""
    dep = DrydockDeployment(repo=str(host_repo), state_dir=state_dir, container_runtime=RUNTIME)
    asyncio.run(dep.start())
    try:
        rt = dep.runtime
        created = asyncio.run(rt.create_session(CreateBashSessionRequest(startup_source=["/root/.bashrc"])))
        assert "/root/.bashrc" in created.output  # not readable by the box user: said, not raised
        asyncio.run(rt.run_in_session(BashAction(command="export LANG=C.UTF-8 && export LC_ALL=C.UTF-8", timeout=25, check="silent")))
        asyncio.run(rt.run_in_session(BashAction(command="cd /", timeout=25, check="silent")))
        obs = asyncio.run(rt.run_in_session(BashAction(command="cd /workspace && sed -i 's/a - b/a + b/' calc.py && echo $LC_ALL", timeout=25, check="silent")))
        assert (obs.exit_code, obs.output.strip()) == (0, "C.UTF-8")
        asyncio.run(rt.write_file(WriteFileRequest(path="/workspace/notes.md", content="fixed\n")))
        assert asyncio.run(rt.read_file(ReadFileRequest(path="/workspace/calc.py"))).content.endswith("a + b\n")
        assert "+    return a + b" in dep.box.diff().diff
    finally:
        asyncio.run(dep.stop())


def test_the_token_stays_out_of_the_config_record() -> None:
    from drydock.swerex import DrydockDeploymentConfig

    config = DrydockDeploymentConfig(url="http://127.0.0.1:9/mcp", token="sekrit-token")
    assert "sekrit-token" not in repr(config)
