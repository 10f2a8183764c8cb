"""The watch of /workspace: which paths changed since the last time the diff's index was brought up
to date, so that the next update (`git add -A`, in diffs, checkpoints and restores) looks at those
paths only instead of every file's stat data and every directory (about 30 ms at 10,000 files in a
one-CPU box).

It is inotify, read with ctypes (Python has no binding of its own, and the box has no other
watcher program): one watch per directory, /workspace/.git left out. Git looks at everything,
as without a watch, whenever the watch cannot vouch for what it missed:
  - until one whole update has run after every directory was watched;
  - after the kernel's queue overflowed, a directory was moved (the paths under it changed),
    a watch could not be added (over MAX_DIRS, out of the kernel's watches), or a request that
    took the changes failed (the index may not have them);
  - when a changed file has more than one link (a write through one name is reported for that
    name only), and while a file made as a second name of another exists (its other name may be
    under .git, where no watch reports a write);
  - when what decides which files git ignores changed: a .gitignore, .git/info/exclude, the
    repository's or the user's git config (and always while a config sets core.excludesFile or
    includes another file, whose changes no watch here sees);
  - past MAX_PATHS changed paths (git matches every entry against every path named);
  - while another request that took changes has not ended (one a client gave up is still
    stopping: what it took may never reach the index).
What inotify cannot see: a file written through a memory mapping after its last close, or
through a second name made under .git for a file of the tree (no event names the file). Only the
box's own programs can do either: the agent can hide changes from its own checkpoints and diffs
that way, as it can by writing the diff's index in /tmp; nothing reaches another session or the
host.

`take(start)` answers (changes, whole): the paths changed, relative to the root, as two lists,
those for `git add -A` (a path gone given as its nearest existing directory: a path git's index
may not hold, a file that came and went, would stop `git add`) and those gone from the root
(for `git rm --cached`), or None when git must look at everything; `start` starts the watch
if it is not running. `done(ok, whole)` after the request ran says whether the index now holds
what the take promised.
"""
import ctypes
import errno
import hashlib
import os
import select
import stat as stat_
import struct
import threading

from .files import read_regular

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK, IN_ISDIR = 0x1000000, 0x2000000, 0x4000000, 0x40000000
WATCH_MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE |
              IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
MAX_DIRS = 20000
MAX_ENTRIES = 200000
MAX_PATHS = 128
MAX_CONFIG_BYTES = 65536
MAX_IGNORE_BYTES = 1 << 20


class Watch:
    def __init__(self, root):
        self.root = root
        self.lock = threading.Lock()
        self.fd = -1
        self.dead = False
        self.wds = {}
        self.dirty = set()
        self.whole = True
        self.trusted = False
        self.suspended = False
        self.links = set()
        self.config = None
        self.inflight = 0
        # The tree writer's own account (tree.py): the paths changed since its tree
        # was last known, whole when it cannot vouch for them.
        self.tree_dirty = set()
        self.tree_whole = True
        self.tree_config = None
        self.tree_epoch = 0
        # Every .gitattributes seen: while one exists, git add may filter what it stores.
        self.attributes = set()
        home = os.environb.get(b"HOME", b"/nonexistent")
        xdg = os.environb.get(b"XDG_CONFIG_HOME") or home + b"/.config"
        self.config_files = [root + b"/.git/config", root + b"/.git/info/exclude", home + b"/.gitconfig",
                             xdg + b"/git/config", xdg + b"/git/ignore", b"/etc/gitconfig"]

    def open(self):
        if self.fd >= 0 or self.dead:
            return
        try:
            self.libc = ctypes.CDLL(None, use_errno=True)
            fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except Exception:
            fd = -1
        if fd < 0:
            self.dead = True
            return
        self.fd = fd
        self.walk(b"")
        threading.Thread(target=self.read_forever, daemon=True).start()

    def die(self):
        self.dead = True
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
        self.fd = -1
        self.wds.clear()
        self.dirty.clear()
        self.tree_dirty.clear()
        self.tree_whole = True
        self.links.clear()

    def read_forever(self):
        poll = select.poll()
        poll.register(self.fd, select.POLLIN)
        while True:
            try:
                poll.poll()
            except OSError:
                return
            with self.lock:
                if self.dead:
                    return
                self.drain()

    def full(self, rel):
        return self.root + b"/" + rel if rel else self.root

    def add(self, rel):
        if len(self.wds) >= MAX_DIRS:
            self.die()
            return False
        wd = self.libc.inotify_add_watch(self.fd, self.full(rel), WATCH_MASK)
        if wd < 0:
            if ctypes.get_errno() not in (errno.ENOENT, errno.ENOTDIR):
                self.die()
            return False
        self.wds[wd] = rel
        return True

    # Watches rel and every directory under it (the watch first, then the listing: a directory
    # made between the two is reported by the watch). The listing's types are the kernel's
    # (no stat of each file: under gVisor that alone is about 90 us a file). A tree of more than
    # MAX_ENTRIES entries is not watched: looking at it again after a flood of changes would cost
    # more than it saves.
    def walk(self, rel):
        todo, seen = [rel], 0
        if not rel and not self.add(rel):
            self.die()
            return
        while todo and not self.dead:
            rel = todo.pop()
            if rel and not self.add(rel):
                continue
            try:
                entries = list(os.scandir(self.full(rel)))
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                # A directory it cannot list (the agent took its permissions): what is under it
                # would go unwatched.
                self.die()
                return
            seen += len(entries)
            if seen > MAX_ENTRIES:
                self.die()
                return
            for entry in entries:
                sub = rel + b"/" + entry.name if rel else entry.name
                if entry.name == b".gitattributes":
                    self.attributes.add(sub)
                try:
                    if entry.is_dir(follow_symlinks=False) and sub != b".git":
                        todo.append(sub)
                except OSError:
                    pass

    # Events were lost (the kernel's queue overflowed, a directory moved and the paths under it
    # with it) or are too many to name: the watches go, so a flood costs nothing more here, and
    # the next take watches the tree anew and asks for a whole update.
    def lost(self):
        for wd in list(self.wds):
            self.libc.inotify_rm_watch(self.fd, wd)
        self.wds.clear()
        self.dirty.clear()
        self.whole = True
        self.tree_dirty.clear()
        self.tree_whole = True
        self.suspended = True

    # (Counted even when the next take is whole anyway: a flood stops the watch either way.)
    def note(self, rel):
        if not self.tree_whole:
            self.tree_dirty.add(rel)
            if len(self.tree_dirty) > MAX_PATHS:
                self.tree_dirty.clear()
                self.tree_whole = True
        self.dirty.add(rel)
        if len(self.dirty) > MAX_PATHS:
            self.lost()

    def drain(self):
        while self.fd >= 0:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                self.die()
                return
            i = 0
            while i + 16 <= len(data):
                wd, mask, _cookie, size = struct.unpack_from("iIII", data, i)
                name = data[i + 16:i + 16 + size].split(b"\0", 1)[0]
                i += 16 + size
                self.event(wd, mask, name)

    def event(self, wd, mask, name):
        if mask & IN_Q_OVERFLOW:
            self.lost()
            return
        if mask & IN_IGNORED:
            self.wds.pop(wd, None)
            return
        base = self.wds.get(wd)
        if base is None:
            return
        if not name:
            # The directory itself was removed or moved: its parent's watch names it too, except
            # the root's, which nothing names.
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF) and not base:
                self.lost()
            return
        rel = base + b"/" + name if base else name
        if rel == b".git" and not mask & (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE):
            # The repository's own directory written to or its times set (a copy-in does): no file
            # of the working tree changed. (What under it decides what git stores or ignores is
            # read at each take: config_print, and the tree writer's settings_plain.)
            return
        if name == b".gitignore":
            self.whole = True
            self.tree_whole = True
        if name == b".gitattributes":
            self.attributes.add(rel)
            self.tree_whole = True
        if mask & IN_ISDIR:
            if mask & IN_MOVED_FROM:
                self.lost()
                return
            if mask & (IN_CREATE | IN_MOVED_TO) and rel != b".git":
                self.walk(rel)
        elif mask & (IN_CREATE | IN_MOVED_TO):
            # A new name for a file that has another (ln): writes through the other may be
            # reported there, or nowhere (a name under .git). Until it goes, git looks at all.
            try:
                if os.lstat(self.full(rel)).st_nlink > 1:
                    self.links.add(rel)
            except OSError:
                pass
        self.note(rel)

    # What decides which files git ignores, as a digest of each file's bytes (None where there is
    # no file): the same bytes decide the same, so a copy-in that writes the same config or exclude
    # file anew changes nothing. None when a file cannot be read whole, or a config names another
    # file (core.excludesFile, include): git must then look at everything every time.
    def config_print(self):
        prints = []
        for path in self.config_files:
            try:
                os.stat(path)
            except FileNotFoundError:
                prints.append(None)
                continue
            except OSError:
                return None
            config = path.endswith(b"config")
            limit = MAX_CONFIG_BYTES if config else MAX_IGNORE_BYTES
            text = read_regular(path, limit + 1)
            if text is None or len(text) > limit:
                return None
            if config:
                lower = text.lower()
                if b"excludesfile" in lower or b"include" in lower:
                    return None
            prints.append(hashlib.sha1(text).digest())
        return prints

    def nlink(self, rel):
        try:
            return os.lstat(self.full(rel)).st_nlink
        except OSError:
            return 0

    # A changed path as git is to be given it: (True, path) to add (a path gone as its nearest
    # existing directory: git drops what its index holds under it), (False, path) for a path
    # gone from the root, which git drops by name (the root as a directory would be everything),
    # a nested repository's inner files as that repository (git holds it as one entry); None when
    # git must look at everything: the root, or a file with another name (a write through one is
    # reported for that name only, so the other may have changed unseen).
    def for_git(self, rel):
        parts = rel.split(b"/")
        if b".git" in parts:
            rel = b"/".join(parts[:parts.index(b".git")])
            parts = rel.split(b"/")
        if not rel:
            return None
        # A path inside a repository of its own (one made or cloned after the watch began, whose
        # .git no event above named) is that repository: `git add -A` holds it as one entry, and
        # given a path inside it, git would add that file instead (or refuse). The outermost one
        # counts, as for git.
        for i in range(1, len(parts)):
            up = b"/".join(parts[:i])
            if os.path.lexists(self.full(up) + b"/.git"):
                rel = up
                break
        try:
            st = os.lstat(self.full(rel))
        except (FileNotFoundError, NotADirectoryError):
            up = rel
            while b"/" in up:
                up = up.rpartition(b"/")[0]
                if os.path.isdir(self.full(up)) and not os.path.islink(self.full(up)):
                    return True, up
            return False, rel
        except OSError:
            return None
        if not stat_.S_ISDIR(st.st_mode) and st.st_nlink > 1:
            return None
        return True, rel

    def take(self, start, tree_reset=False):
        with self.lock:
            # A request that took changes and has not ended may yet fail (a client gave it up:
            # its git is being stopped): until it ends, what it took is not known to be in the
            # index, so a take beside it is whole.
            self.inflight += 1
            if self.fd < 0 and not start:
                return None, False
            self.open()
            if self.dead:
                return None, False
            self.drain()
            if self.suspended:
                self.suspended = False
                self.walk(b"")
                self.drain()
            if self.dead:
                return None, False
            self.links = {rel for rel in self.links if self.nlink(rel) > 1}
            config = self.config_print()
            whole = (self.whole or not self.trusted or self.inflight > 1 or bool(self.links) or
                     config is None or config != self.config)
            self.config = config
            dirty = self.dirty
            self.dirty = set()
            self.whole = False
            if tree_reset and config is not None:
                # The tree the request writes is the tree from now on: later changes are its.
                self.tree_dirty = set()
                self.tree_whole = False
                self.tree_config = config
                self.tree_epoch += 1
            if whole:
                return None, True
            paths, gone = set(), set()
            for rel in dirty:
                found = self.for_git(rel)
                if found is None:
                    return None, True
                (paths if found[0] else gone).add(found[1])
            return (sorted(paths), sorted(gone)), False

    # The tree writer's take: the paths changed since its tree was last known, or None when it
    # cannot vouch for them (it then has the request's script write the tree, as without it).
    def tree_take(self):
        with self.lock:
            if self.fd < 0 or self.dead or self.suspended or self.inflight:
                return None
            self.drain()
            if self.dead or self.suspended or self.tree_whole:
                return None
            self.links = {rel for rel in self.links if self.nlink(rel) > 1}
            self.attributes = {rel for rel in self.attributes if os.path.lexists(self.full(rel))}
            config = self.config_print()
            if self.links or self.attributes or config is None or config != self.tree_config:
                return None
            dirty = self.tree_dirty
            self.tree_dirty = set()
            return dirty

    # Whether the tree writer's account still vouches for the changes since its tree (tree_take's
    # conditions, nothing taken): a session's start keeps a tree its warm box was primed with.
    def tree_vouches(self):
        with self.lock:
            if self.fd < 0 or self.dead or self.suspended or self.inflight:
                return False
            self.drain()
            if self.dead or self.suspended or self.tree_whole:
                return False
            self.links = {rel for rel in self.links if self.nlink(rel) > 1}
            self.attributes = {rel for rel in self.attributes if os.path.lexists(self.full(rel))}
            return not self.links and not self.attributes and self.config_print() == self.tree_config

    # A tree write that took changes failed: it vouches for nothing until a script writes one.
    def tree_lost(self):
        with self.lock:
            self.tree_dirty.clear()
            self.tree_whole = True

    def done(self, ok, whole):
        with self.lock:
            self.inflight = max(0, self.inflight - 1)
            if not ok:
                self.trusted = False
            elif whole:
                self.trusted = True
