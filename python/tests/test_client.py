"""The client's verbs and errors against a real ``drydock serve --http``."""

from __future__ import annotations

import asyncio
import os
import pickle
import subprocess
from pathlib import Path

import pytest

import drydock
from drydock import (
    ApplyConflictError,
    AsyncDrydock,
    BoxGoneError,
    CheckpointDamagedError,
    Drydock,
    DrydockError,
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
from drydock.errors import error_from_reply

from conftest import git


@pytest.fixture
def box(drydock: Drydock):
    sandbox = drydock.create()
    yield sandbox
    sandbox.close()


def test_create_on_the_servers_repository(drydock: Drydock, box, host_repo: Path) -> None:
    assert box.info.repo == str(host_repo.resolve())
    assert box.info.base_commit == git(host_repo, "rev-parse", "HEAD").strip()
    assert box.info.limits["network"] == "none"
    assert box.read_text("calc.py") == "def add(a, b):\n    return a - b\n"
    assert box.session_secret and box.session_secret not in repr(box)


def test_create_on_another_repository_and_a_ref(drydock: Drydock, other_repo: Path) -> None:
    with drydock.create(str(other_repo), ref="main") as other:
        assert other.read_text("other.txt") == "other\n"
        assert other.run("ls").stdout.split() == ["other.txt"]


def test_create_on_a_directory(drydock: Drydock, workdir: Path) -> None:
    source = workdir / "plain-dir"
    (source / "sub").mkdir(parents=True)
    (source / "sub" / "data.bin").write_bytes(bytes(range(256)))
    (source / "hello.txt").write_text("hello\n")
    with drydock.create(directory=str(source)) as box:
        assert box.read_text("hello.txt") == "hello\n"
        assert box.read_bytes("sub/data.bin") == bytes(range(256))


def test_create_on_another_image(drydock: Drydock) -> None:
    # The sandbox image under another name: Drydock.local starts a server of its own for it.
    with drydock.create(image="drydock-sandbox:latest") as box:
        assert box.info.image == "drydock-sandbox:latest"
        assert box.run("echo hi").stdout == "hi\n"


def test_run_shell_persistent_and_streams_apart(box) -> None:
    result = box.run("cd /tmp && export GREETING=hi; printf 'one\\ntwo\\n'; echo oops >&2; sh -c 'exit 3'")
    assert result.exit_code == 3
    assert result.stdout == "one\ntwo\n"
    assert result.stderr == "oops\n"
    assert not result.ok
    again = box.run("pwd; echo $GREETING")
    assert again.stdout == "/tmp\nhi\n" and again.ok


def test_run_argv_stdin_cwd_env(box) -> None:
    result = box.run(
        ["python3", "-c", "import os,sys; print(os.getcwd(), os.environ['WHO'], sys.stdin.read()[::-1])"],
        stdin="olleh",
        cwd="/tmp",
        env={"WHO": "me; rm -rf /"},
    )
    assert result.exit_code == 0, result
    assert result.stdout == "/tmp me; rm -rf / hello\n"
    # Nothing of it persists: the shell is where it was.
    assert box.run("pwd").stdout == "/workspace\n"
    # Words are passed as they are, quotes and all.
    words = ["printf", "%s|", "a b", "'q'", '"d"', "$HOME", "`x`"]
    assert box.run(words).stdout == "a b|'q'|\"d\"|$HOME|`x`|"


def test_run_large_stdin_and_binary_stdin(box) -> None:
    data = os.urandom(700_000)
    result = box.run(["sha256sum"], stdin=data)
    import hashlib

    assert result.stdout.split()[0] == hashlib.sha256(data).hexdigest()
    assert box.run("ls /tmp | grep -c drydock-upload || true").stdout.strip() == "0"


def test_run_timeout_stops_the_command(box) -> None:
    result = box.run("sleep 30; echo never", timeout=1)
    assert result.timed_out and result.exit_code is None
    assert "never" not in result.stdout
    assert box.run("echo after").stdout == "after\n"


def test_run_output_cap_keeps_head_and_tail(box) -> None:
    result = box.run("seq 1 100000", max_output_bytes=1000)
    assert result.truncated
    assert result.stdout.startswith("1\n2\n") and result.stdout.rstrip().endswith("100000")
    assert len(result.stdout) < 5000


def test_a_megabyte_of_output_crosses_once(box, monkeypatch) -> None:
    # The client reads only structuredContent and says so: the reply has no text repeating it.
    import functools

    from mcp import ClientSession

    replies: list[object] = []
    original = ClientSession.call_tool

    @functools.wraps(original)  # the client reads call_tool's signature
    async def recording(self, *args, **kw):  # type: ignore[no-untyped-def]
        replies.append(await original(self, *args, **kw))
        return replies[-1]

    monkeypatch.setattr(ClientSession, "call_tool", recording)
    result = box.run("yes 'a line of output' | head -c 1000000; echo done >&2", max_output_bytes=2_000_000)
    assert len(result.stdout) == 1_000_000 and result.stderr == "done\n"
    assert result.output == result.stdout + result.stderr
    reply = replies[-1]
    assert reply.content == []  # type: ignore[attr-defined]
    wire = reply.model_dump_json(by_alias=True)  # type: ignore[attr-defined]
    assert wire.count("a line of output") == result.stdout.count("a line of output")
    assert len(wire) < 1_100_000


def test_run_tty_or_plain_files(box) -> None:
    assert box.run("test -t 1 && echo tty").stdout == "tty\n"
    assert box.run(["bash", "-c", "test -t 1 || echo plain"], tty=False).stdout == "plain\n"
    streamed: list[str] = []
    box.run("for i in 1 2 3; do echo line$i; done", on_output=streamed.append)
    assert streamed == ["line1", "line2", "line3"]


def test_files_bytes_text_and_large(box) -> None:
    box.write_text("notes/crlf.txt", "a\r\nb")
    assert box.read_text("notes/crlf.txt") == "a\r\nb"
    assert box.read_bytes("/workspace/notes/crlf.txt") == b"a\r\nb"
    box.write_text("latin.txt", "café", encoding="latin-1")
    assert box.read_bytes("latin.txt") == "café".encode("latin-1")
    big = os.urandom(7 * 1024 * 1024 + 11)  # more than one request and one reply
    box.write_bytes("big/blob.bin", big)
    assert box.read_bytes("big/blob.bin") == big
    box.write_bytes("empty.bin", b"")
    assert box.read_bytes("empty.bin") == b""
    # An existing file keeps its mode.
    box.run("chmod 755 latin.txt")
    box.write_text("latin.txt", "new")
    assert box.run("stat -c %a latin.txt").stdout == "755\n"


def test_path_outside_the_workspace_is_refused_by_the_server(box) -> None:
    for path in ["../../etc/passwd", "/etc/passwd", "/workspace/../tmp/x"]:
        with pytest.raises(PathOutsideWorkspaceError) as caught:
            box.read_bytes(path)
        assert caught.value.code == "path_outside_workspace"
        assert "outside /workspace" in str(caught.value)
        with pytest.raises(PathOutsideWorkspaceError):
            box.write_text(path, "x")
    # Through a symlink made in the box.
    box.run("ln -s /etc escape")
    with pytest.raises(PathOutsideWorkspaceError):
        box.read_text("escape/passwd")
    with pytest.raises(PathOutsideWorkspaceError):
        box.write_text("escape/evil", "x")
    # Also a PermissionError for callers that catch the built-in.
    with pytest.raises(PermissionError):
        box.read_bytes("/etc/hostname")


def test_file_errors(box) -> None:
    with pytest.raises(NotFoundError) as missing:
        box.read_bytes("nope.txt")
    assert isinstance(missing.value, FileNotFoundError) and missing.value.code == "not_found"
    box.run("mkdir -p adir")
    with pytest.raises(IsDirectoryError):
        box.read_bytes("adir")
    with pytest.raises(IsDirectoryError):
        box.write_text("adir", "x")
    box.write_text("locked.txt", "secret\n")
    box.run("chmod 000 locked.txt")
    with pytest.raises(PermissionDeniedError) as denied:
        box.read_bytes("locked.txt")
    assert isinstance(denied.value, PermissionError) and denied.value.code == "permission_denied"
    box.write_bytes("bin.dat", b"\xff\xfe\x00")
    with pytest.raises(UnicodeDecodeError):
        box.read_text("bin.dat")


def test_invalid_arguments(drydock: Drydock, box, workdir: Path) -> None:
    with pytest.raises(InvalidArgumentError) as bad_env:
        box.run(["true"], env={"NOT A NAME": "x"})
    assert bad_env.value.field == "env"
    with pytest.raises(InvalidArgumentError):
        box.run("true", timeout=0)
    with pytest.raises(InvalidArgumentError):
        box.run([])
    with pytest.raises(InvalidArgumentError) as unserved:
        drydock.create(str(workdir))
    assert unserved.value.field == "repo" and "--allow-repo" in str(unserved.value)
    with pytest.raises(InvalidArgumentError) as over:
        drydock.create(memory_mb=10_000_000)
    assert over.value.field == "memory_mb"
    with pytest.raises(InvalidArgumentError) as egress:
        drydock.create(egress=["example.com"])
    assert egress.value.field == "egress" and "--egress" in str(egress.value)
    with pytest.raises(InvalidArgumentError):
        AsyncDrydock.connect("ftp://example.com/mcp")


def test_diff_and_apply_to_a_branch_and_the_worktree(drydock: Drydock, host_repo: Path) -> None:
    with drydock.create() as box:
        box.write_text("calc.py", "def add(a, b):\n    return a + b\n")
        diff = box.diff()
        assert "-    return a - b" in diff.diff and "+    return a + b" in diff.diff
        assert "calc.py" in diff.stat and diff.base_commit == box.info.base_commit
        applied = box.apply(branch="fix/add")
        assert applied.mode == "branch" and applied.branch == "fix/add" and applied.commit
        assert git(host_repo, "show", "fix/add:calc.py") == "def add(a, b):\n    return a + b\n"
        assert (host_repo / "calc.py").read_text().endswith("a - b\n")  # working tree untouched
        with pytest.raises(InvalidArgumentError) as exists:
            box.apply(branch="fix/add")
        assert exists.value.field == "branch"
        assert box.apply(branch="fix/add", replace_branch=True).branch == "fix/add"
    with drydock.create() as box:
        box.write_text("new.txt", "new\n")
        applied = box.apply(worktree=True)
        assert applied.mode == "worktree"
        assert (host_repo / "new.txt").read_text() == "new\n"
    (host_repo / "new.txt").unlink()


def test_apply_conflict_and_unsafe_diff(drydock: Drydock, host_repo: Path) -> None:
    with drydock.create() as box:
        box.write_text("README.md", "# changed in the box\n")
        (host_repo / "README.md").write_text("# changed on the host\n")
        try:
            with pytest.raises(ApplyConflictError) as conflict:
                box.apply(worktree=True)
            assert conflict.value.code == "apply_conflict"
        finally:
            git(host_repo, "checkout", "--", "README.md")
    with drydock.create() as box:
        box.run("rm .gitignore")
        with pytest.raises(UnsafeDiffError) as unsafe:
            box.apply(worktree=True)
        assert "allow_ignore_changes" in str(unsafe.value)
        applied = box.apply(branch="drop-ignore")
        assert applied.warnings


def test_checkpoint_restore_fork(drydock: Drydock) -> None:
    with drydock.create() as box:
        box.write_text("state.txt", "one\n")
        box.run("cd /tmp && export PHASE=one")
        saved = box.checkpoint("one", message="first")
        assert saved.name == "one" and saved.message == "first" and saved.changed_files >= 1
        assert saved.cwd == "/tmp"
        box.write_text("state.txt", "two\n")
        restored = box.restore("one")
        assert restored.name == "one"
        assert box.read_text("state.txt") == "one\n"
        assert [c.name for c in box.checkpoints()] == ["one"]
        box.write_text("state.txt", "three\n")
        forks = box.fork(2, checkpoint="one")
        assert len(forks) == 2 and len({f.id for f in forks} | {box.id}) == 3
        assert [f.read_text("state.txt") for f in forks] == ["one\n", "one\n"]
        now = box.fork()[0]
        assert now.read_text("state.txt") == "three\n"
        for f in [*forks, now]:
            f.close()
        with pytest.raises(InvalidArgumentError):
            box.checkpoint("../bad")
        with pytest.raises(DrydockError):
            box.restore("never-saved")
        # Tampered checkpoint data is refused, nothing changed.
        box.checkpoint("two")
        box.run(
            "cd /workspace && git for-each-ref --format='%(refname)' refs/drydock/checkpoints/ | "
            "while read -r ref; do git update-ref \"$ref\" refs/drydock/base; done"
        )
        with pytest.raises(CheckpointDamagedError):
            box.restore("two")


def test_closed_session_and_gone_box(drydock: Drydock) -> None:
    box = drydock.create()
    box.close()
    box.close()  # twice is fine
    with pytest.raises(SessionNotFoundError):
        box.run("true")
    gone = drydock.create()
    subprocess.run(["docker", "rm", "-f", gone.info.box], check=True, capture_output=True)
    with pytest.raises(BoxGoneError) as caught:
        gone.run("true")
    assert "session_create" in str(caught.value)
    gone.close()


def test_admission_limit(state_dir: str, host_repo: Path) -> None:
    with Drydock.local(state_dir=state_dir, repo=str(host_repo), pool=0, max_sessions=1) as dd:
        first = dd.create()
        with pytest.raises(LimitExceededError) as full:
            dd.create()
        assert "--max-sessions" in str(full.value)
        first.close()
        dd.create().close()


def test_tool_the_server_does_not_serve(state_dir: str, host_repo: Path) -> None:
    from drydock import LocalServer

    # A server of the core tools only: no checkpoints.
    server = LocalServer(state_dir=state_dir, repo=str(host_repo), pool=0, tools="core")
    try:
        with Drydock.connect(server.url, server.token) as dd:
            box = dd.create()
            with pytest.raises(ToolUnavailableError) as caught:
                box.checkpoint("x")
            assert "--tools" in str(caught.value)
    finally:
        server.stop()


def test_unreachable_server_and_wrong_token_never_show_the_token(drydock: Drydock) -> None:
    token = drydock.server.token
    assert token and token not in repr(drydock) and token not in repr(drydock.server)
    wrong = "wrong-" + token[::-1]
    with Drydock.connect(drydock.url, wrong) as dd:
        with pytest.raises(ServerUnreachableError) as caught:
            dd.create()
    message = str(caught.value) + repr(caught.value)
    assert "token" in message and wrong not in message and token not in message
    with Drydock.connect("http://127.0.0.1:9/mcp", token) as dd:
        with pytest.raises(ServerUnreachableError) as nobody:
            dd.create()
    assert token not in str(nobody.value) + repr(nobody.value)
    assert isinstance(nobody.value, ConnectionError)


def test_local_server_start_failure(state_dir: str) -> None:
    with pytest.raises(ServerStartError) as caught:
        Drydock.local(state_dir=state_dir, repo="/nonexistent/repo")
    assert "exited" in str(caught.value)
    with pytest.raises(ServerStartError):
        Drydock.local(cli="/nonexistent/drydock")
    # An image the engine lacks, and no engine: the server's own message, with its fix.
    with pytest.raises(ServerStartError) as no_image:
        Drydock.local(state_dir=state_dir, image="drydock-no-such-image:1", pool=0)
    assert "drydock-no-such-image:1 is not in the engine" in str(no_image.value)
    from drydock import LocalServer

    with pytest.raises(ServerStartError) as no_engine:
        LocalServer(state_dir=state_dir, pool=0, env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    assert "no Docker Engine answers" in str(no_engine.value)


def test_every_server_error_code_has_its_class() -> None:
    codes = {
        "invalid_argument": drydock.InvalidArgumentError,
        "path_outside_workspace": drydock.PathOutsideWorkspaceError,
        "not_found": drydock.NotFoundError,
        "binary_file": drydock.BinaryFileError,
        "limit_exceeded": drydock.LimitExceededError,
        "session_not_found": drydock.SessionNotFoundError,
        "apply_conflict": drydock.ApplyConflictError,
        "unsafe_diff": drydock.UnsafeDiffError,
        "checkpoint_damaged": drydock.CheckpointDamagedError,
        "box_gone": drydock.BoxGoneError,
        "engine_unavailable": drydock.EngineUnavailableError,
        "image_missing": drydock.ImageMissingError,
        "command_timeout": drydock.CommandTimeoutError,
    }
    for code, cls in codes.items():
        name = cls.__name__
        error = error_from_reply(f"{code}: what to do", {"drydock/error": {"code": code, "name": name, "field": "path"}})
        assert type(error) is cls and error.code == code and str(error) == f"{code}: what to do"
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is cls and again.code == code and str(again) == str(error)
    directory = error_from_reply("x is a directory", {"drydock/error": {"code": "invalid_argument", "name": "IsDirectoryError"}})
    assert isinstance(directory, IsDirectoryError) and isinstance(directory, IsADirectoryError)
    plain = error_from_reply("an old server's message", None)
    assert type(plain) is DrydockError and plain.code == "tool_error"


async def test_async_client(host_repo: Path, state_dir: str) -> None:
    async with await AsyncDrydock.local(state_dir=state_dir, repo=str(host_repo), pool=0) as dd:
        boxes = await asyncio.gather(dd.create(), dd.create())
        results = await asyncio.gather(*(b.run(["echo", b.id]) for b in boxes))
        assert [r.stdout.strip() for r in results] == [b.id for b in boxes]
        await boxes[0].write_text("a.txt", "async\n")
        assert await boxes[0].read_text("a.txt") == "async\n"
        assert len(dd.sandboxes) == 2
    assert dd.sandboxes == []


def test_a_server_that_dies_mid_call(state_dir: str, host_repo: Path, workdir: Path) -> None:
    import signal
    import threading
    import time

    from conftest import boxes_of

    own_state = str(workdir / "dies-state")
    dd = Drydock.local(state_dir=own_state, repo=str(host_repo), pool=0)
    box = dd.create()
    threading.Timer(2, lambda: os.kill(dd.server.process.pid, signal.SIGKILL)).start()
    started = time.monotonic()
    with pytest.raises(ServerUnreachableError):
        box.run("sleep 60", timeout=120)
    assert time.monotonic() - started < 30
    with pytest.raises(ServerUnreachableError):
        box.run("true")
    dd.close()  # the dead server's box is removed too
    assert boxes_of(own_state) == []


async def test_a_quiet_connection_pings_the_server(drydock: Drydock, monkeypatch) -> None:
    # The server closes a client that sent nothing for 30 minutes, and removes its boxes.
    import drydock._connection as connection
    from mcp import ClientSession

    pings: list[object] = []
    original = ClientSession.send_ping

    async def counting(self, **kw):  # type: ignore[no-untyped-def]
        pings.append(await original(self, **kw))
        return pings[-1]

    monkeypatch.setattr(connection, "KEEPALIVE_S", 0.2)
    monkeypatch.setattr(ClientSession, "send_ping", counting)
    client = AsyncDrydock.connect(drydock.url, drydock.server.token)
    box = await client.create()
    await asyncio.sleep(1.5)
    assert len(pings) >= 3
    assert (await box.run("echo alive")).stdout == "alive\n"
    await client.close()
