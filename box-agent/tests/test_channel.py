"""The channel's framing over pipes, with the agent started exactly as the host starts it in a box
(loader, bootstrap, modules from memory), on this interpreter and on the oldest and newest python3
found here."""
import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest
from conftest import AGENT, agent_sources, pythons, start_agent

PYTHONS = pythons()


class Agent:
    def __init__(self, python=None, **popen):
        self.proc = start_agent(python, **popen)
        self.buf = b""
        assert self.header() == {"ready": True}

    def fill(self, deadline):
        left = deadline - time.monotonic()
        assert left > 0, "the agent did not answer in time"
        if select.select([self.proc.stdout.fileno()], [], [], left)[0]:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            assert chunk, "the agent ended: %r" % self.proc.stderr.read()
            self.buf += chunk

    def read(self, n, timeout=20):
        deadline = time.monotonic() + timeout
        while len(self.buf) < n:
            self.fill(deadline)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def header(self, timeout=20):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            self.fill(deadline)
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line.decode())

    def send(self, head, stdin=b""):
        self.proc.stdin.write(json.dumps(head).encode() + b"\n" + stdin)
        self.proc.stdin.flush()

    def request(self, rid, argv, stdin=b"", cap=1 << 20, **extra):
        head = {"id": rid, "argv": argv, "stdin": len(stdin), "cap": cap}
        head.update(extra)
        self.send(head, stdin)

    def answer(self):
        head = self.header()
        out = self.read(head["out"])
        err = self.read(head["err"])
        return head, out, err

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.stdout.close()
            self.proc.stderr.close()


@pytest.fixture(params=sorted(PYTHONS))
def agent(request):
    a = Agent(PYTHONS[request.param])
    yield a
    a.close()


def test_runs_a_request_with_stdin_and_answers_exit_code_stdout_and_stderr(agent):
    agent.request(1, ["sh", "-c", "cat; echo oops >&2; exit 3"], stdin=b"in\x00put")
    head, out, err = agent.answer()
    assert head == {"id": 1, "exit": 3, "out": 6, "err": 5, "truncated": False}
    assert out == b"in\x00put"
    assert err == b"oops\n"


def test_caps_what_it_keeps_and_says_so(agent):
    agent.request(2, ["sh", "-c", "head -c 100000 /dev/zero; echo e >&2"], cap=1000)
    head, out, err = agent.answer()
    assert head == {"id": 2, "exit": 0, "out": 1000, "err": 2, "truncated": True}
    assert out == b"\0" * 1000


def test_a_program_that_cannot_start_answers_127(agent):
    agent.request(3, ["/nonexistent/program"])
    head, _, err = agent.answer()
    assert head["id"] == 3 and head["exit"] == 127 and head["out"] == 0 and err


def test_a_signal_is_128_plus_its_number(agent):
    agent.request(4, ["sh", "-c", "kill -9 $$"])
    head, _, _ = agent.answer()
    assert head["exit"] == 128 + 9


def test_answers_a_quick_request_while_a_slow_one_runs_and_kills_the_slow_ones_group(agent, tmp_path):
    marker = tmp_path / "child"
    # The child of the slow request writes its pid; the kill takes it too (its process group).
    agent.request(5, ["sh", "-c", "sleep 30 & echo $! > %s; wait" % marker])
    agent.request(6, ["echo", "quick"])
    head, out, _ = agent.answer()
    assert (head["id"], out) == (6, b"quick\n")
    for _ in range(100):
        if marker.exists() and marker.read_text().strip():
            break
        time.sleep(0.05)
    child = int(marker.read_text())
    agent.send({"id": 5, "kill": True})
    head, _, _ = agent.answer()
    assert head["id"] == 5 and head["exit"] == 128 + signal.SIGTERM
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the slow request's child still runs")


def test_a_kill_before_the_request_starts_stops_it_at_its_start(agent):
    agent.send({"id": 7, "kill": True})
    agent.request(7, ["sleep", "30"])
    head, _, _ = agent.answer()
    assert head["id"] == 7 and head["exit"] == 128 + signal.SIGTERM


def test_the_end_of_input_ends_the_agent_and_what_it_runs(tmp_path):
    agent = Agent()
    marker = tmp_path / "pid"
    agent.request(8, ["sh", "-c", "echo $$ > %s; exec sleep 30" % marker])
    for _ in range(100):
        if marker.exists() and marker.read_text().strip():
            break
        time.sleep(0.05)
    child = int(marker.read_text())
    agent.close()
    assert agent.proc.returncode == 0
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    pytest.fail("the request's process outlived the agent")


def test_a_request_with_changes_gets_all_when_the_watch_is_not_running(agent):
    agent.request(9, ["sh", "-c", 'printf %s "$DRYDOCK_CHANGES"'], changes=True)
    head, out, _ = agent.answer()
    assert out == b"all"


def test_a_save_the_tree_writer_cannot_vouch_for_runs_its_script(agent):
    # No tree yet: the tree writer declines (and says why on stderr), the script answers.
    agent.request(10, ["echo", "script"], changes=True, fast={"op": "save"})
    head, out, _ = agent.answer()
    assert out == b"script\n"


def test_the_agent_is_not_dumpable():
    # A process that is not dumpable has its /proc/<pid> files owned by root, not by its user, so
    # other processes of that user cannot open its fds. Run as another user where we can.
    popen, python = {}, None
    if os.getuid() == 0:
        # (An interpreter the other user can run: this one may live under /root.)
        python = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(p, os.X_OK)), None)
        if python is None:
            pytest.skip("no python3 that another user can run")
        popen = {"cwd": "/", "preexec_fn": lambda: (os.setgroups([]), os.setgid(65534), os.setuid(65534))}
    agent = Agent(python, **popen)
    try:
        st = os.stat("/proc/%d/fd" % agent.proc.pid)
        assert st.st_uid == 0
        if os.getuid() != 0:
            with pytest.raises(PermissionError):
                os.listdir("/proc/%d/fd" % agent.proc.pid)
    finally:
        agent.close()


def test_no_file_outside_the_sources_it_was_sent_stands_in_for_a_module(tmp_path):
    # A drydock_box in the working directory and on PYTHONPATH (the agent's own files in a box)
    # is never imported: -I ignores both, and the agent's finder comes first anyway.
    fake = tmp_path / "drydock_box"
    fake.mkdir()
    marker = tmp_path / "imported"
    for name in ("__init__.py", "channel.py", "watch.py"):
        (fake / name).write_text("open(%r, 'w').write('yes')\n" % str(marker))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    agent = Agent(cwd=str(tmp_path), env=env)
    try:
        agent.request(1, ["true"])
        assert agent.answer()[0]["exit"] == 0
    finally:
        agent.close()
    assert not marker.exists()


def test_modules_come_from_memory_under_their_own_names():
    probe = {"drydock_box/__init__.py": "", "drydock_box/channel.py": (
        "import sys, drydock_box.watch as w, drydock_box.gitutil as g\n"
        "def main():\n"
        "    loaded = sorted(m for m in sys.modules if m.startswith('drydock_box'))\n"
        "    sys.stdout.write(repr((w.__name__, w.__spec__.origin, hasattr(w, '__file__'), g.feed_fd is not None,\n"
        "                           'feed_fd' in vars(w), loaded)))\n"
        "    sys.stdout.flush()\n")}
    sources = agent_sources()
    sources.update(probe)
    proc = start_agent(sources=sources)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    name, origin, has_file, _, leaked, loaded = eval(out)
    assert (name, origin, has_file, leaked) == ("drydock_box.watch", "<drydock_box/watch.py>", False, False)
    assert loaded == ["drydock_box", "drydock_box.channel", "drydock_box.files", "drydock_box.gitutil",
                      "drydock_box.watch"]


def test_runs_as_a_module_too():
    proc = subprocess.run([sys.executable, "-I", "-c", "import sys; sys.path.insert(0, %r); "
                           "import runpy; runpy.run_module('drydock_box', run_name='__main__')" % AGENT],
                          input=b"", stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b'{"ready": true}\n'
