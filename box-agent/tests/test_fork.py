"""A fork's export and import by the box agent between two temporary repositories, and the checks of
the agent's index it makes on the way."""
import base64
import hashlib
import os
import struct

import pytest
from conftest import BASE_REF, CHECKPOINT_REFS, KEEP_REFS, MODULES, git_out, run_git, script_save, tree_of_files
from drydock_box.fork import Forker, plain_index
from drydock_box.gitutil import Decline
from drydock_box.watch import Watch


def index_bytes(root):
    return (root / ".git" / "index").read_bytes()


def test_a_plain_index_is_plain(workspace):
    assert plain_index(index_bytes(workspace)) is True


def test_an_index_that_is_not_plain(workspace):
    body = index_bytes(workspace)
    assert plain_index(body[:-1] + bytes([body[-1] ^ 1])) is False  # its checksum
    assert plain_index(body[:20]) is False
    run_git(workspace, "update-index", "--index-version", "4")
    assert plain_index(index_bytes(workspace)) is False
    run_git(workspace, "update-index", "--index-version", "2")
    run_git(workspace, "update-index", "--assume-unchanged", "a.txt")
    assert plain_index(index_bytes(workspace)) is False


def test_a_split_index_is_the_scripts(workspace):
    run_git(workspace, "update-index", "--split-index")
    with pytest.raises(Decline):
        plain_index(index_bytes(workspace))


def test_an_extension_after_the_entries_is_read_past(workspace):
    body = index_bytes(workspace)[:-20]
    body += b"TREE" + struct.pack(">I", 0)
    assert plain_index(body + hashlib.sha1(body).digest()) is True


@pytest.fixture
def two_boxes(workspace, tmp_path, monkeypatch):
    """The source's workspace with a checkpoint (slot 1), and a new box's: a clone of its base with
    the diff's index made, as a prefilled box has."""
    source = workspace
    (source / "a.txt").write_text("forked\n")
    (source / "src" / "c.txt").write_text("c\n")
    run_git(source, "branch", "topic")
    run_git(source, "add", "a.txt")
    k, _, _ = script_save(source, tmp_path / "source-index", "1")
    target = tmp_path / "target"
    run_git(tmp_path, "clone", "-q", "--no-local", str(source), str(target))
    run_git(target, "remote", "remove", "origin")
    run_git(target, "checkout", "-q", "--detach", git_out(source, "rev-parse", BASE_REF))
    run_git(target, "update-ref", BASE_REF, "HEAD")
    index = tmp_path / "target-index"
    run_git(target, "read-tree", "HEAD", env={"GIT_INDEX_FILE": str(index)})
    return source, target, k, index


def at(monkeypatch, root):
    broot = os.fsencode(str(root))
    for module in MODULES:
        if hasattr(module, "ROOT"):
            monkeypatch.setattr(module, "ROOT", broot)
        if hasattr(module, "AGENT_INDEX"):
            monkeypatch.setattr(module, "AGENT_INDEX", broot + b"/.git/index")
    return Forker(Watch(broot))


def test_export_then_import_brings_the_checkpoint_into_the_new_box(two_boxes, tmp_path, monkeypatch):
    source, target, k, index = two_boxes
    exported = at(monkeypatch, source).export_({
        "op": "export", "hold": 1 << 30, "slot": "1", "commit": k, "includeIgnored": False, "baseRef": BASE_REF,
        "checkpointRefs": CHECKPOINT_REFS, "keepRefs": KEEP_REFS}, git_out(target, "rev-parse", "HEAD").encode())
    assert exported is not None, "the export declined"
    code, out, err = exported
    assert code == 0 and err == b"exported by the box's program\n"
    base_raw, fork_k, pack = out.split(b"\n", 2)
    assert pack.startswith(b"PACK")
    assert base64.b64decode(base_raw) == run_git(source, "cat-file", "commit", BASE_REF)
    # The index travels as a delta: the fork's commit holds d, not i, at the checkpoint's time.
    fork_k = fork_k.decode()
    assert fork_k != k
    names = git_out(source, "ls-tree", "--name-only", fork_k).split("\n")
    assert names == ["d", "h", "r", "w"]

    imported = at(monkeypatch, target).import_({
        "op": "import", "slot": "1", "commit": fork_k, "baseCommit": git_out(source, "rev-parse", BASE_REF),
        "baseRaw": base_raw.decode(), "index": str(index), "workIndex": str(tmp_path / "work-index"),
        "prefilledMark": str(tmp_path / "prefilled"), "baseRef": BASE_REF, "checkpointRefs": CHECKPOINT_REFS,
        "keepRefs": KEEP_REFS}, pack)
    assert imported is not None, "the import declined"
    code, out, err = imported
    assert code == 0 and out.startswith(b"restored ") and out.endswith(b" fast\n")
    assert tree_of_files(target, tmp_path) == git_out(source, "rev-parse", k + ":w")
    assert (target / "a.txt").read_text() == "forked\n"
    assert git_out(target, "rev-parse", "%s/1" % CHECKPOINT_REFS) == fork_k
    assert git_out(target, "rev-parse", "refs/heads/topic") == git_out(source, "rev-parse", "refs/heads/topic")
    # The agent's index: what the source's held (a.txt staged), with the new box's stat data.
    staged = git_out(target, "diff", "--cached", "--name-only", "HEAD")
    assert staged == git_out(source, "diff", "--cached", "--name-only", "HEAD") == "a.txt"
    run_git(target, "fsck", "--strict", "--no-dangling")


def test_an_export_past_the_hold_is_cut(two_boxes, monkeypatch):
    source, _, k, _ = two_boxes
    code, out, _ = at(monkeypatch, source).export_({
        "op": "export", "hold": 10, "slot": "1", "commit": k, "includeIgnored": False, "baseRef": BASE_REF,
        "checkpointRefs": CHECKPOINT_REFS, "keepRefs": KEEP_REFS}, b"")
    assert code == 0 and len(out) > 10


def test_an_import_into_a_box_with_no_files_yet_is_the_scripts(two_boxes, tmp_path, monkeypatch):
    _, target, k, index = two_boxes
    os.unlink(str(index))
    assert at(monkeypatch, target).import_({
        "op": "import", "slot": "1", "commit": k, "baseCommit": k, "baseRaw": "", "index": str(index),
        "workIndex": "", "prefilledMark": "", "baseRef": BASE_REF, "checkpointRefs": CHECKPOINT_REFS,
        "keepRefs": KEEP_REFS}, b"") is None
