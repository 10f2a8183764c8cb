"""The watch of /workspace on a temporary directory (inotify: Linux)."""
import os

import pytest
from drydock_box.watch import MAX_PATHS, Watch


@pytest.fixture(autouse=True)
def watches(monkeypatch):
    """Every watch a test made ends with it (its inotify descriptor closed, its reader gone)."""
    made = []
    init = Watch.__init__

    def tracked(self, root):
        init(self, root)
        made.append(self)
    monkeypatch.setattr(Watch, "__init__", tracked)
    yield
    for w in made:
        with w.lock:
            w.die()


@pytest.fixture
def tree(tmp_path, home):
    root = tmp_path / "w"
    (root / ".git" / "info").mkdir(parents=True)
    (root / "dir" / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("a")
    (root / "dir" / "b.txt").write_text("b")
    (root / "dir" / "sub" / "c.txt").write_text("c")
    return root


def started(root):
    """A watch that has run its first, whole, take and whose update went through: trusted."""
    w = Watch(os.fsencode(str(root)))
    assert w.take(True) == (None, True)
    w.done(True, True)
    return w


def take(w):
    found, whole = w.take(False)
    w.done(True, whole)
    return found, whole


def test_does_not_start_unless_asked(tree):
    w = Watch(os.fsencode(str(tree)))
    assert w.take(False) == (None, False)
    assert w.fd < 0
    w.done(True, False)


def test_first_take_is_whole_then_names_what_changed(tree):
    w = started(tree)
    assert take(w) == (([], []), False)
    (tree / "a.txt").write_text("changed")
    (tree / "dir" / "sub" / "new.txt").write_text("new")
    assert take(w) == (([b"a.txt", b"dir/sub/new.txt"], []), False)
    assert take(w) == (([], []), False)


def test_a_path_gone_is_named_by_its_nearest_directory_or_as_gone_from_the_root(tree):
    w = started(tree)
    os.unlink(str(tree / "dir" / "sub" / "c.txt"))
    os.unlink(str(tree / "a.txt"))
    assert take(w) == (([b"dir/sub"], [b"a.txt"]), False)


def test_a_new_directory_is_watched_from_its_making(tree):
    w = started(tree)
    (tree / "made" / "deeper").mkdir(parents=True)
    (tree / "made" / "deeper" / "f").write_text("f")
    # The new directory is named (what was made under it before its watch came is git's to find
    # there), and what the reader saw under it once watched, if it ran in between.
    found, whole = take(w)
    assert not whole and found[1] == [] and b"made" in found[0]
    assert set(found[0]) <= {b"made", b"made/deeper", b"made/deeper/f"}
    (tree / "made" / "deeper" / "f").write_text("again")
    assert take(w) == (([b"made/deeper/f"], []), False)


@pytest.mark.parametrize("dot_git", ["dir", "file"])
def test_a_repository_made_inside_after_the_watch_began_is_named_as_one_entry(tree, dot_git):
    w = started(tree)
    # As `git init` or `git clone` inside /workspace would leave it (a worktree or a submodule
    # has a .git file instead): git's whole `add -A` holds it as one entry.
    (tree / "dir" / "inner" / "src").mkdir(parents=True)
    if dot_git == "dir":
        (tree / "dir" / "inner" / ".git").mkdir()
        (tree / "dir" / "inner" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    else:
        (tree / "dir" / "inner" / ".git").write_text("gitdir: /elsewhere\n")
    (tree / "dir" / "inner" / "src" / "f.py").write_text("f")
    found, whole = take(w)
    assert not whole
    assert found == ([b"dir/inner"], [])
    (tree / "dir" / "inner" / "src" / "f.py").write_text("changed")
    (tree / "dir" / "b.txt").write_text("outside it")
    assert take(w) == (([b"dir/b.txt", b"dir/inner"], []), False)


def test_git_directory_is_not_watched(tree):
    w = started(tree)
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert take(w) == (([], []), False)


@pytest.mark.parametrize("change", ["gitignore", "exclude", "config", "too many", "moved dir", "hard link"])
def test_whole_when_it_cannot_vouch(tree, change):
    w = started(tree)
    if change == "gitignore":
        (tree / "dir" / ".gitignore").write_text("*.log\n")
    elif change == "exclude":
        (tree / ".git" / "info" / "exclude").write_text("*.tmp\n")
    elif change == "config":
        (tree / ".git" / "config").write_text("[core]\n\tbare = false\n")
    elif change == "too many":
        for i in range(MAX_PATHS + 1):
            (tree / ("f%d" % i)).write_text("x")
    elif change == "moved dir":
        os.rename(str(tree / "dir" / "sub"), str(tree / "moved"))
    elif change == "hard link":
        os.link(str(tree / "a.txt"), str(tree / "dir" / "a-link"))
    assert take(w) == (None, True)
    if change != "hard link":
        # Once a whole update went through, it names changes again.
        (tree / "a.txt").write_text("again")
        assert take(w) == (([b"a.txt"], []), False)
    else:
        # While the second name exists, every take is whole.
        (tree / "a.txt").write_text("again")
        assert take(w) == (None, True)
        os.unlink(str(tree / "dir" / "a-link"))
        assert take(w) == (([b"dir"], []), False)


def test_a_config_that_names_another_file_keeps_every_take_whole(tree):
    (tree / ".git" / "config").write_text("[core]\n\texcludesFile = /elsewhere\n")
    w = started(tree)
    assert take(w) == (None, True)
    assert take(w) == (None, True)


def test_a_failed_request_makes_the_next_take_whole(tree):
    w = started(tree)
    (tree / "a.txt").write_text("x")
    found, whole = w.take(False)
    assert found == ([b"a.txt"], [])
    w.done(False, whole)
    assert take(w) == (None, True)
    assert take(w) == (([], []), False)


def test_a_take_beside_one_that_has_not_ended_is_whole(tree):
    w = started(tree)
    first = w.take(False)
    assert first == (([], []), False)
    assert w.take(False) == (None, True)
    w.done(True, False)
    w.done(True, True)
    assert take(w) == (([], []), False)


def test_a_fifo_where_the_config_is_read_does_not_block(tree, home):
    os.mkfifo(str(home / ".gitconfig"))
    w = Watch(os.fsencode(str(tree)))
    assert w.take(True) == (None, True)
    w.done(True, True)
    # The config cannot be read: git must look at everything, every time, and nothing hangs.
    assert take(w) == (None, True)


def test_the_tree_writers_account(tree):
    w = started(tree)
    assert w.tree_take() is None  # whole until a save's script wrote a tree
    found, whole = w.take(False, tree_reset=True)
    epoch = w.tree_epoch
    w.done(True, whole)
    assert epoch == 1
    (tree / "dir" / "b.txt").write_text("changed")
    assert w.tree_take() == {b"dir/b.txt"}
    assert w.tree_take() == set()
    (tree / "dir" / ".gitattributes").write_text("* text\n")
    assert w.tree_take() is None


# (The watch's reader thread then starts on the closed descriptor and ends at once, as it always did:
# pyproject.toml lets that thread's exception pass.)
def test_a_tree_too_large_to_watch_kills_the_watch(tree, monkeypatch):
    from drydock_box import watch
    monkeypatch.setattr(watch, "MAX_ENTRIES", 3)
    w = Watch(os.fsencode(str(tree)))
    assert w.take(True) == (None, False)
    assert w.dead
    w.done(True, False)


def test_a_request_whose_listings_find_no_room_asks_git_for_everything(workspace, monkeypatch):
    # The agent filled /tmp: the channel cannot write the changed paths' listing there. The
    # request must still run (git looking at everything), not be left unanswered.
    import errno as errno_
    import tempfile

    from drydock_box.channel import Channel
    from drydock_box.fork import Forker
    from drydock_box.tree import TreeWriter
    w = started(workspace)
    channel = Channel(None, None, w, TreeWriter(w), Forker(w))
    (workspace / "a.txt").write_text("changed")

    def full(*_args, **_kwargs):
        raise OSError(errno_.ENOSPC, "No space left on device")
    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    env, listings, whole = channel.changes(False, False)
    assert env[b"DRYDOCK_CHANGES"] == b"all" and b"DRYDOCK_GONE" not in env
    assert listings == [] and whole is True
    w.done(True, whole)


def test_ignore_rules_written_anew_with_the_same_bytes_change_nothing(tree):
    # A copy-in writes .git/config and .git/info/exclude again, as new files with the same bytes:
    # git ignores what it ignored, so the next take still names only what changed.
    (tree / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (tree / ".git" / "info" / "exclude").write_text("*.tmp\n")
    w = started(tree)
    for name in ("config", "info/exclude"):
        path = tree / ".git" / name
        body = path.read_bytes()
        os.unlink(str(path))
        path.write_bytes(body)
    (tree / "a.txt").write_text("changed")
    assert take(w) == (([b"a.txt"], []), False)
    (tree / ".git" / "info" / "exclude").write_text("*.tmp\n*.log\n")
    assert take(w) == (None, True)


def test_writes_to_the_roots_git_directory_are_no_change_but_replacing_it_is(tree):
    w = started(tree)
    os.utime(str(tree / ".git"), (1, 1))
    os.chmod(str(tree / ".git"), 0o700)
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
    assert take(w) == (([], []), False)
    os.rename(str(tree / ".git"), str(tree / ".git-old"))
    os.rename(str(tree / ".git-old"), str(tree / ".git"))
    found, whole = take(w)
    assert found is None
