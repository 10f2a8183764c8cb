"""A session's first checkpoint: the request that starts the watch at a session's start ("prime")
has the tree writer read the tree of the diff's index in the background, so that the first save is
the tree writer's, not its script's. Every save the tree writer answers must be the tree `git add
-A` and `write-tree` make of the same files, whatever happened around the priming: changes before,
during and after it, a save while it runs, and what a hostile repository puts in the way."""
import json
import os
import random
import shutil
import sys
import threading
import time

import pytest
from conftest import AGENT, BASE_REF, CHECKPOINT_REFS, KEEP_REFS, git_out, run_git, script_save, tree_of_files
from drydock_box import tree as tree_module
from drydock_box.channel import Channel
from drydock_box.fork import Forker
from drydock_box.tree import TreeWriter
from drydock_box.watch import Watch

# The real add_changes (src/workspace/add-changes.sh) and the diff script's "index" step
# (src/workspace/box-workspace.ts, DIFF) around it.
ADD_CHANGES = open(os.path.join(os.path.dirname(AGENT), "src", "workspace", "add-changes.sh")).read()
INDEX_STEP = ADD_CHANGES + """
cd "$1"
export GIT_INDEX_FILE="$2"
if [ -f "$GIT_INDEX_FILE" ]; then add_changes; else git read-tree %s; add_changes whole; fi
""" % BASE_REF


# The save's script, as a test's request runs it where the tree writer declines.
SCRIPT_SAVE = """
import sys
sys.path.insert(0, sys.argv[1])
import pathlib
from conftest import script_save
k, size, files = script_save(pathlib.Path(sys.argv[2]), sys.argv[3], sys.argv[4])
print("saved %s %d %d" % (k, size, files))
"""


class Answers:
    """The channel's output, as the host reads it: each answer (one write) a JSON head line, then
    its stdout and stderr bytes."""

    def __init__(self):
        self.answers = []

    def write(self, data):
        self.answers.append(data)

    def flush(self):
        pass

    def last(self):
        line, _, body = self.answers[-1].partition(b"\n")
        meta = json.loads(line)
        return meta, body[:meta["out"]], body[meta["out"]:meta["out"] + meta["err"]]


@pytest.fixture
def box(workspace, tmp_path):
    """The agent's parts on the test's workspace, served as the channel serves them."""
    (workspace / ".gitignore").write_text("*.log\n")
    run_git(workspace, "add", ".gitignore")
    run_git(workspace, "commit", "-q", "-m", "ignore")
    run_git(workspace, "update-ref", BASE_REF, "HEAD")
    watch = Watch(os.fsencode(str(workspace)))
    writer = TreeWriter(watch)
    out = Answers()
    channel = Channel(None, out, watch, writer, Forker(watch))
    index = tmp_path / "diff-index"
    yield Box(workspace, tmp_path, index, watch, writer, channel, out)
    with writer.lock:
        writer.idle.wait_for(lambda: not writer.pending, 30)
    with watch.lock:
        watch.die()


class Box:
    def __init__(self, root, tmp, index, watch, writer, channel, out):
        self.root, self.tmp, self.index = root, tmp, index
        self.watch, self.writer, self.channel, self.out = watch, writer, channel, out
        self.slot = 10

    def prime(self, wait=True, read_all=False):
        """The session's start (or a warm box's prefill, read_all): the watch started, the diff's
        index brought up to date, priming."""
        self.channel.serve({"id": 1, "argv": ["bash", "-c", INDEX_STEP, "x", str(self.root), str(self.index)],
                            "changes": "start",
                            "fast": {"op": "prime", "index": str(self.index), "baseRef": BASE_REF,
                                     "readAll": read_all}}, b"")
        meta, _, err = self.out.last()
        assert meta["exit"] == 0, err
        if wait:
            self.settle()

    def settle(self):
        with self.writer.lock:
            assert self.writer.idle.wait_for(lambda: not self.writer.pending, 30)

    def save(self):
        """A save as the host asks for it: (commit, bytes, files, whether the tree writer made it);
        where it declines, the script's save (conftest.script_save) runs as the request's argv."""
        self.slot += 1
        req = {"op": "save", "slot": str(self.slot), "max": 1 << 30, "shell": False, "index": str(self.index),
               "baseRef": BASE_REF, "checkpointRefs": CHECKPOINT_REFS, "keepRefs": KEEP_REFS,
               "shellFile": "/nonexistent", "shellMax": 1000}
        argv = [sys.executable, "-c", SCRIPT_SAVE, os.path.dirname(__file__), str(self.root), str(self.index),
                str(self.slot)]
        self.channel.serve({"id": 2, "argv": argv, "changes": "start", "fast": req}, b"")
        meta, out, err = self.out.last()
        assert meta["exit"] == 0, err
        words = out.split()
        assert words[0] == b"saved", out
        return words[1].decode(), int(words[2]), int(words[3]), words[-1] == b"fast"

    def check(self, saved):
        """The tree writer's checkpoint is the script's of the same files, counts included."""
        k, size, files, _ = saved
        assert git_out(self.root, "rev-parse", k + ":w") == tree_of_files(self.root, self.tmp)
        self.slot += 1
        k2, size2, files2 = script_save(self.root, self.tmp / "script-index", str(self.slot))
        assert git_out(self.root, "rev-parse", k + "^{tree}") == git_out(self.root, "rev-parse", k2 + "^{tree}")
        assert (size, files) == (size2, files2)


def test_a_sessions_first_save_after_priming_is_the_tree_writers_and_the_scripts(box):
    box.prime()
    # The agent's index is written ahead as the blob the save will hold.
    index_blob = git_out(box.root, "hash-object", str(box.root / ".git" / "index"))
    run_git(box.root, "cat-file", "-e", index_blob)
    (box.root / "a.txt").write_text("changed after priming\n")
    (box.root / "src" / "new").mkdir()
    (box.root / "src" / "new" / "c.txt").write_text("new\n")
    os.unlink(str(box.root / "src" / "b.py"))
    (box.root / "debug.log").write_text("ignored\n")
    saved = box.save()
    assert saved[3], "the first save went to the script"
    box.check(saved)
    run_git(box.root, "fsck", "--strict", "--no-dangling")


def test_a_save_right_after_the_start_waits_for_the_priming_and_holds_every_change(box):
    # Nothing waited for: the save comes as soon as the start's request is answered, with changes
    # made while the priming runs.
    box.prime(wait=False)
    (box.root / "a.txt").write_text("at once\n")
    saved = box.save()
    assert saved[3], "the save did not wait for the priming"
    box.check(saved)


def test_a_save_the_priming_did_not_make_in_time_goes_to_the_script_and_the_late_tree_is_dropped(box, monkeypatch):
    # The priming's tree comes after the save's script wrote one (which resets the watch's
    # account): the late tree does not match that account and must not be taken.
    monkeypatch.setattr(tree_module, "PRIME_WAIT", 0)
    found, whole = box.watch.take(True, True)
    run_git(box.root, "read-tree", BASE_REF, env={"GIT_INDEX_FILE": str(box.index)})
    run_git(box.root, "add", "-A", env={"GIT_INDEX_FILE": str(box.index)})
    box.watch.done(True, whole)
    epoch = box.watch.tree_epoch
    box.writer.expect()
    (box.root / "a.txt").write_text("before the save\n")
    saved = box.save()
    assert not saved[3]
    box.check(saved)
    assert box.watch.tree_epoch == epoch + 1
    with box.writer.lock:
        assert box.writer.idle.wait_for(lambda: box.writer.pending == 1, 30)
    from_script = box.writer.model
    assert from_script is not None
    (box.root / "a.txt").write_text("after the save's script\n")
    box.writer.prime(str(box.index).encode(), BASE_REF.encode(), epoch)
    assert box.writer.model is from_script
    assert box.writer.pending == 0
    saved = box.save()
    assert saved[3]
    box.check(saved)


def test_changes_while_priming_runs_are_in_the_first_save(box):
    stop = threading.Event()

    def keep_writing():
        i = 0
        while not stop.is_set():
            i += 1
            (box.root / "a.txt").write_text("write %d\n" % i)
            (box.root / ("f%d.txt" % (i % 5))).write_text("f %d\n" % i)
    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        box.prime()
    finally:
        stop.set()
        writer.join()
    saved = box.save()
    box.check(saved)
    # Either way, the next is the tree writer's and exact.
    (box.root / "a.txt").write_text("last\n")
    saved = box.save()
    assert saved[3]
    box.check(saved)


def test_a_file_written_twice_in_the_same_second_with_the_same_size(box):
    (box.root / "a.txt").write_text("AAAA\n")
    box.prime()
    # Right after the priming's index was written: the same second, the same size, other bytes.
    (box.root / "a.txt").write_text("BBBB\n")
    saved = box.save()
    assert saved[3]
    box.check(saved)
    assert git_out(box.root, "cat-file", "blob", saved[0] + ":w/a.txt") == "BBBB"
    (box.root / "a.txt").write_text("CCCC\n")
    saved = box.save()
    assert git_out(box.root, "cat-file", "blob", saved[0] + ":w/a.txt") == "CCCC"
    box.check(saved)


def test_nested_repositories_symlinks_and_ignored_files_after_priming(box):
    box.prime()
    nested = box.root / "vendor" / "lib"
    nested.mkdir(parents=True)
    run_git(nested, "init", "-q", "-b", "main")
    (nested / "x.txt").write_text("x\n")
    run_git(nested, "add", "-A")
    run_git(nested, "commit", "-q", "-m", "nested")
    os.symlink("/etc/passwd", str(box.root / "outside"))
    os.symlink("src", str(box.root / "src-link"))
    (box.root / "src" / "trace.log").write_text("ignored\n")
    saved = box.save()
    box.check(saved)
    (box.root / "src" / "b.py").write_text("print('again')\n")
    saved = box.save()
    assert saved[3]
    box.check(saved)
    tree = git_out(box.root, "ls-tree", "-r", saved[0] + ":w")
    assert "120000 blob" in tree and "outside" in tree and "trace.log" not in tree


def test_a_diffs_index_that_is_a_fifo_or_missing_primes_nothing_and_blocks_nothing(box):
    box.prime()
    box.writer.forget()
    os.unlink(str(box.index))
    os.mkfifo(str(box.index))
    started = time.monotonic()
    box.writer.expect()
    box.writer.prime(str(box.index).encode(), BASE_REF.encode(), box.watch.tree_epoch)
    assert time.monotonic() - started < 5
    assert box.writer.model is None
    os.unlink(str(box.index))
    box.writer.expect()
    box.writer.prime(str(box.index).encode(), BASE_REF.encode(), box.watch.tree_epoch)
    assert box.writer.model is None
    assert not [name for name in os.listdir("/tmp") if name.startswith(".drydock-prime-")]


def test_a_deep_tree_is_read_a_level_at_a_time_and_saved_exactly(box):
    deep = box.root
    for i in range(60):
        deep = deep / ("d%d" % i)
    deep.mkdir(parents=True)
    (deep / "leaf.txt").write_text("leaf\n")
    (box.root / "wide").mkdir()
    for i in range(300):
        (box.root / "wide" / ("w%d.txt" % i)).write_text("%d\n" % i)
    run_git(box.root, "add", "-A")
    run_git(box.root, "commit", "-q", "-m", "deep and wide")
    run_git(box.root, "update-ref", BASE_REF, "HEAD")
    box.prime()
    (deep / "leaf.txt").write_text("changed\n")
    (box.root / "wide" / "w7.txt").write_text("changed\n")
    saved = box.save()
    assert saved[3]
    box.check(saved)
    # Only the trees on the way to the changes were read.
    loaded = box.writer.model["w"]["dirs"]
    assert b"wide" in loaded and b"src" not in loaded and len(loaded) == 62


def test_random_changes_after_priming_save_as_git_adds_them(box):
    rng = random.Random(41)
    box.prime()
    names = ["a", "b", "c"]
    fast = 0
    for round_ in range(25):
        for _ in range(rng.randint(1, 6)):
            path = box.root
            for _ in range(rng.randint(0, 3)):
                path = path / rng.choice(names)
            op = rng.random()
            try:
                if op < 0.4:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    if path.is_dir() and not path.is_symlink():
                        path = path / rng.choice(names)
                    path.write_text("%d %f\n" % (round_, rng.random()))
                elif op < 0.55:
                    path.mkdir(parents=True, exist_ok=True)
                elif op < 0.75 and path.exists() and path != box.root:
                    if path.is_dir() and not path.is_symlink():
                        shutil.rmtree(str(path))
                    else:
                        os.unlink(str(path))
                elif op < 0.85 and not path.exists():
                    path.parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(rng.choice(["a", "../b", "/tmp"]), str(path))
                elif path.is_file():
                    os.chmod(str(path), 0o755)
            except OSError:
                pass
        saved = box.save()
        fast += saved[3]
        assert git_out(box.root, "rev-parse", saved[0] + ":w") == tree_of_files(box.root, box.tmp), "round %d" % round_
    # Most rounds are the tree writer's (a round whose changes it cannot vouch for goes to the
    # script, which is right too, and the next round starts from the script's tree).
    assert fast >= 20


def test_a_warm_boxs_tree_primed_before_its_base_serves_its_sessions_first_save(box):
    # The pool's prefill: no base yet (the session's copy-in sets it), every tree read ahead.
    base = git_out(box.root, "rev-parse", BASE_REF)
    run_git(box.root, "update-ref", "-d", BASE_REF)
    box.prime(read_all=True)
    assert box.writer.model is not None and box.writer.model["base_commit"] is None
    assert len(box.writer.model["w"]["dirs"]) == 2
    epoch = box.watch.tree_epoch
    # The session's copy-in: a file from the host, the config and exclude written anew with the
    # same bytes, the repository's directory touched, the base set.
    (box.root / "src" / "host.txt").write_text("from the host\n")
    for name in ("config", "info/exclude"):
        path = box.root / ".git" / name
        if path.exists():
            body = path.read_bytes()
            os.unlink(str(path))
            path.write_bytes(body)
    os.utime(str(box.root / ".git"))
    run_git(box.root, "update-ref", BASE_REF, base)
    # The session's start keeps that tree (its account still vouches for it) and counts from the
    # base in the background; the first save is the tree writer's, with the script's counts.
    box.prime()
    assert box.watch.tree_epoch == epoch, "the session's start primed again"
    assert box.writer.model["base_commit"] == base.encode()
    (box.root / "a.txt").write_text("the agent's\n")
    saved = box.save()
    assert saved[3]
    box.check(saved)
    assert saved[2] == 2


def test_a_warm_boxs_tree_its_copy_in_changed_past_the_account_is_primed_again(box):
    run_git(box.root, "update-ref", "-d", BASE_REF)
    box.prime(read_all=True)
    epoch = box.watch.tree_epoch
    for i in range(200):
        (box.root / ("f%d.txt" % i)).write_text("%d\n" % i)
    run_git(box.root, "update-ref", BASE_REF, "HEAD")
    box.prime()
    assert box.watch.tree_epoch == epoch + 1
    saved = box.save()
    assert saved[3]
    box.check(saved)
