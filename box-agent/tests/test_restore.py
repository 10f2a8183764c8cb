"""A checkpoint's restore by the box agent on a temporary repository: the working tree, the refs,
HEAD and the agent's index come back as the checkpoint holds them, and what is unusual is left to
the script."""
import os

import pytest
from conftest import BASE_REF, CHECKPOINT_REFS, git_out, run_git, script_save, tree_of_files
from drydock_box.fork import Forker
from drydock_box.watch import Watch


@pytest.fixture
def saved(workspace, tmp_path):
    index = tmp_path / "diff-index"
    run_git(workspace, "branch", "keep-me")
    (workspace / "a.txt").write_text("as saved\n")
    run_git(workspace, "add", "a.txt")  # the agent's index holds a staged change
    k, _, _ = script_save(workspace, index, "1")
    return k, index


def request(index, k, tmp_path, **extra):
    req = {"op": "restore", "slot": "1", "commit": k, "shell": False, "index": str(index),
           "workIndex": str(tmp_path / "work-index"), "baseRef": BASE_REF, "checkpointRefs": CHECKPOINT_REFS,
           "shellFile": str(tmp_path / "shell-state")}
    req.update(extra)
    return req


def restorer(workspace):
    return Forker(Watch(os.fsencode(str(workspace))))


def test_restores_files_refs_head_and_the_agents_index(workspace, saved, tmp_path):
    k, index = saved
    saved_index = (workspace / ".git" / "index").read_bytes()
    # The agent moves on: files, a branch gone and one new, HEAD detached, its index changed.
    (workspace / "a.txt").write_text("later\n")
    os.unlink(str(workspace / "src" / "b.py"))
    (workspace / "new.txt").write_text("new\n")
    run_git(workspace, "branch", "-D", "keep-me")
    run_git(workspace, "branch", "extra")
    run_git(workspace, "checkout", "-q", "--detach")
    run_git(workspace, "add", "-A")
    answer = restorer(workspace).restore(request(index, k, tmp_path), b"")
    assert answer is not None, "the restore declined"
    code, out, err = answer
    assert (code, err) == (0, b"") and out.startswith(b"restored ") and out.endswith(b" fast\n")
    assert tree_of_files(workspace, tmp_path) == git_out(workspace, "rev-parse", k + ":w")
    assert not (workspace / "new.txt").exists()
    assert (workspace / "a.txt").read_text() == "as saved\n"
    assert (workspace / ".git" / "HEAD").read_text().strip() == "ref: refs/heads/main"
    branches = git_out(workspace, "for-each-ref", "--format=%(refname)", "refs/heads").split("\n")
    assert branches == ["refs/heads/keep-me", "refs/heads/main"]
    assert (workspace / ".git" / "index").read_bytes() == saved_index
    m = int(git_out(workspace, "cat-file", "blob", k + ":m"))
    assert int((workspace / ".git" / "index").stat().st_mtime) == m


def test_writes_the_shell_state_it_is_given(workspace, saved, tmp_path):
    k, index = saved
    code, _, _ = restorer(workspace).restore(request(index, k, tmp_path, shell=True), b"cwd\0state")
    assert code == 0
    assert (tmp_path / "shell-state").read_bytes() == b"cwd\0state"


@pytest.mark.parametrize("unusual", ["moved ref", "not an id", "no diff index", "head a link", "bad slot"])
def test_leaves_the_unusual_to_the_script(workspace, saved, tmp_path, unusual):
    k, index = saved
    req = request(index, k, tmp_path)
    if unusual == "moved ref":
        run_git(workspace, "update-ref", "%s/1" % CHECKPOINT_REFS, BASE_REF)
    elif unusual == "not an id":
        req["commit"] = "HEAD"
    elif unusual == "no diff index":
        os.unlink(str(index))
    elif unusual == "head a link":
        head = workspace / ".git" / "HEAD"
        text = head.read_text()
        os.unlink(str(head))
        (workspace / ".git" / "HEAD.real").write_text(text)
        os.symlink("HEAD.real", str(head))
    elif unusual == "bad slot":
        req["slot"] = "1/../x"
    assert restorer(workspace).restore(req, b"") is None
