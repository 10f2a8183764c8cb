"""The tree writer on a temporary repository: a save it serves writes the checkpoint the save's
script would (the same trees, counts and refs), and it declines what it cannot vouch for."""
import os

import pytest
from conftest import BASE_REF, CHECKPOINT_REFS, KEEP_REFS, git_out, run_git, script_save, tree_of_files
from drydock_box.tree import TreeWriter
from drydock_box.watch import Watch


@pytest.fixture
def writer(workspace, tmp_path):
    """A tree writer whose tree is the one the save's script just wrote (slot 1), as after a
    session's first checkpoint: the watch started by that save's request, the tree read back."""
    (workspace / ".gitignore").write_text("*.log\n")
    run_git(workspace, "add", ".gitignore")
    run_git(workspace, "commit", "-q", "-m", "ignore")
    run_git(workspace, "update-ref", BASE_REF, "HEAD")
    index = tmp_path / "diff-index"
    watch = Watch(os.fsencode(str(workspace)))
    found, whole = watch.take(True, True)
    k, _, _ = script_save(workspace, index, "1")
    watch.done(True, whole)
    w = TreeWriter(watch)
    w.load(k.encode(), watch.tree_epoch)
    assert w.model is not None
    yield w, index
    with watch.lock:
        watch.die()


def request(index, slot="2", **extra):
    req = {"op": "save", "slot": slot, "max": 1 << 30, "shell": False, "index": str(index), "baseRef": BASE_REF,
           "checkpointRefs": CHECKPOINT_REFS, "keepRefs": KEEP_REFS, "shellFile": "/nonexistent",
           "shellMax": 1000}
    req.update(extra)
    return req


def change_files(root):
    (root / "a.txt").write_text("a changed\n")
    os.unlink(str(root / "src" / "b.py"))
    (root / "src" / "deep" / "er").mkdir(parents=True)
    (root / "src" / "deep" / "er" / "new.txt").write_text("new\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(str(root / "run.sh"), 0o755)
    os.symlink("a.txt", str(root / "link"))
    (root / "debug.log").write_text("ignored\n")


def test_a_save_it_serves_is_the_scripts_checkpoint(writer, workspace, tmp_path):
    w, index = writer
    change_files(workspace)
    answer = w.save(request(index))
    assert answer is not None, "the tree writer declined"
    code, out, err = answer
    assert code == 0 and err == b""
    words = out.split()
    assert words[0] == b"saved" and words[-1] == b"fast"
    k = words[1].decode()
    # The working tree as git add -A stores it: ignored file left out, the link and mode kept.
    assert git_out(workspace, "rev-parse", k + ":w") == tree_of_files(workspace, tmp_path)
    assert git_out(workspace, "rev-parse", "%s/2" % CHECKPOINT_REFS) == k
    assert git_out(workspace, "rev-parse", k + "^") == git_out(workspace, "rev-parse", BASE_REF)
    # The script's save of the same files: the same parts, the same counts.
    k2, size, files = script_save(workspace, index, "3")
    assert git_out(workspace, "rev-parse", k + "^{tree}") == git_out(workspace, "rev-parse", k2 + "^{tree}")
    assert (int(words[2]), int(words[3])) == (size, files)
    run_git(workspace, "fsck", "--strict", "--no-dangling")


def test_a_second_save_starts_from_the_first(writer, workspace, tmp_path):
    w, index = writer
    (workspace / "a.txt").write_text("one\n")
    assert w.save(request(index, slot="2")) is not None
    (workspace / "src" / "b.py").write_text("two\n")
    code, out, _ = w.save(request(index, slot="3"))
    k = out.split()[1].decode()
    assert git_out(workspace, "rev-parse", k + ":w") == tree_of_files(workspace, tmp_path)


def test_over_the_limit_it_says_so_and_names_nothing(writer, workspace):
    w, index = writer
    (workspace / "big").write_bytes(b"x" * 5000)
    code, out, _ = w.save(request(index, max=100))
    assert code == 0 and out.startswith(b"over ")
    assert git_out(workspace, "for-each-ref", "%s/2" % CHECKPOINT_REFS) == ""


@pytest.mark.parametrize("unusual", ["attributes", "autocrlf", "no model", "hard link", "fifo"])
def test_declines_what_it_cannot_vouch_for(writer, workspace, unusual):
    w, index = writer
    if unusual == "attributes":
        (workspace / ".gitattributes").write_text("*.txt text eol=crlf\n")
    elif unusual == "autocrlf":
        run_git(workspace, "config", "core.autocrlf", "true")
    elif unusual == "no model":
        w.model = None
    elif unusual == "hard link":
        os.link(str(workspace / "a.txt"), str(workspace / "a2.txt"))
    elif unusual == "fifo":
        # (A new FIFO git does not list; one where git holds a file, it would read.)
        os.unlink(str(workspace / "a.txt"))
        os.mkfifo(str(workspace / "a.txt"))
    assert w.save(request(index)) is None


def test_the_shell_state_follows_the_saved_line(writer, workspace, tmp_path):
    w, index = writer
    state = tmp_path / "shell-state"
    state.write_bytes(b"/workspace\0A=1\0")
    (workspace / "a.txt").write_text("x\n")
    code, out, _ = w.save(request(index, shell=True, shellFile=str(state), shellMax=1000))
    assert code == 0 and out.endswith(b" fast\n/workspace\0A=1\0")
    os.unlink(str(state))
    (workspace / "a.txt").write_text("y\n")
    code, out, err = w.save(request(index, slot="3", shell=True, shellFile=str(state), shellMax=1000))
    assert code == 1 and err == b"the shell's state is not a readable file\n"
