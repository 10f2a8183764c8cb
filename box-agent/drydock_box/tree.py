"""The tree writer: the git tree of /workspace kept in the agent's memory between requests and
brought up to date from the box's watch (watch.py), so that a checkpoint's save writes the few
objects that changed with no git process for the working tree, where its script (src/workspace/
checkpoint-script.ts) runs ten: `git add` and `write-tree` each read and write the whole index
(about 30 ms at 10,000 files in a one-CPU box) and each git costs a few ms to start.

A request that names `"fast": {"op": "save", …}` is served here when the tree writer can vouch
for what it holds, and by its script otherwise, which gives the same answer: the save's script
is then run as any request, and the tree it wrote (`<checkpoint>:w`) is read back, in the
background, as the tree from which the next save starts (and, from a session's start, the tree
of the diff's index: `prime`; a warm box's, primed in the pool, serves its session). The tree
writer answers for nothing it did not see: it declines (and the script runs) whenever the
watch cannot vouch for the paths changed since (the same cases as for the diff's index, plus
more than MAX_PATHS changed), another request that took changes still runs, git's config or
the box's attributes could make `git add` store other bytes than the file's (filters, line
endings, core.fileMode, core.symlinks, core.ignoreCase, a SHA-256 repository), a changed path is
in a nested repository, is not a file, a link or a directory, or is over MAX_FILE bytes, or anything fails.

Which paths the tree holds is git's word, not the writer's: for the paths that changed, one
`git ls-files --cached --others --exclude-standard` on the diff's index names the files that
`git add -A` would hold in it (tracked ones whatever the ignore rules say, new ones unless
ignored); the writer hashes those that exist, as files or links, never following a link on the
way (each directory is opened with O_NOFOLLOW from the root down). It writes objects as git
writes loose ones (zlib, mode 0444, linked into place, never over one that is there), and a
test compares every tree it writes with the tree `git add -A` and `write-tree` make of the same
files (test/security/tree-writer.test.ts, and tests/test_tree.py here).

Git's objects and config as it reads them are in gitutil.py.

The checkpoint's layout (src/workspace/checkpoint-script.ts): a commit whose parent is the base,
whose tree holds w (the working tree), h (HEAD), r (the refs), and, with an index, i (its
bytes) and m (its time); refs names come with the request, so this program knows none.
"""
import os
import stat as stat_
import tempfile
import threading
import time

from .files import read_regular
from .gitutil import (
    FALSE,
    MAX_FILE,
    ROOT,
    TREE_MODE,
    TRUE,
    Batch,
    Decline,
    Objects,
    git,
    git_beside,
    left_to_script,
    parse_config,
    parse_refs,
    tree_key,
)
from .watch import MAX_CONFIG_BYTES

# How long a save waits for a load or a priming under way before it leaves the save to its
# script: either costs about what the script would (both read the index and every tree git
# changed), so past this something is slow that the script will meet too.
PRIME_WAIT = 2.0
# The largest diff's index primed from (about 100 bytes a file: a million files).
MAX_INDEX = 128 << 20
# The largest diff's index whose tree a warm box's priming reads whole (about 40,000 files: some
# 25 ms of a one-CPU box and a few MB of the agent's memory at 10,000).
READ_ALL_MAX_INDEX = 4 << 20


def depth_of(d):
    return d.count(b"/") + 1 if d else 0


# A tree object's entries, name -> (mode, id), as git writes them ("<mode> <name>\0<20 bytes>").
def parse_tree(body):
    entries, at, end = {}, 0, len(body)
    while at < end:
        space = body.find(b" ", at)
        nul = body.find(b"\0", space + 1)
        if space < 0 or nul < 0 or nul + 21 > end:
            raise Decline("a tree object git would not have written")
        mode = body[at:space]
        entries[body[space + 1:nul]] = (TREE_MODE if mode == TREE_MODE else mode, body[nul + 1:nul + 21])
        at = nul + 21
    return entries


class TreeWriter:
    def __init__(self, watch):
        self.watch = watch
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)
        self.pending = 0
        self.model = None
        self.batch = None

    # --- what the tree writer vouches for ---

    def settings_plain(self):
        # Attributes (filters, eol) anywhere git reads them, or a config that changes how a file
        # becomes a blob: the script's git add then stores what git decides.
        xdg = os.environb.get(b"XDG_CONFIG_HOME") or os.environb.get(b"HOME", b"/nonexistent") + b"/.config"
        for path in (ROOT + b"/.git/info/attributes", xdg + b"/git/attributes", b"/etc/gitattributes"):
            if os.path.lexists(path):
                return False
        for path in self.watch.config_files:
            if not path.endswith(b"config"):
                continue
            if not os.path.lexists(path):
                continue
            text = read_regular(path, MAX_CONFIG_BYTES + 1)
            if text is None or len(text) > MAX_CONFIG_BYTES:
                return False
            found = parse_config(text)
            if found is None:
                return False
            for key, value in found.items():
                if key.startswith(b"filter") or key.startswith(b"sub"):
                    continue
                if key in (b"core.filemode", b"core.symlinks") and value not in TRUE:
                    return False
                if key in (b"core.ignorecase", b"core.autocrlf", b"core.precomposeunicode") and value not in FALSE:
                    return False
                if key in (b"core.eol", b"core.attributesfile", b"core.safecrlf", b"core.checkroundtripencoding",
                           b"core.worktree", b"core.sparsecheckout", b"index.sparse"):
                    return False
                if key.startswith(b"extensions."):
                    return False
        return True

    # --- the model: each directory's entries, name -> (mode, sha); trees' ids where known ---

    # A model is lazy: it starts as w's root tree and the paths that differ from the base, and
    # reads a directory's tree object only when a change reaches into it (load_dirs), so that
    # making one costs what differs from the base, not the repository (at 10,000 files reading
    # every tree is about 25 ms in a one-CPU box). A directory is loaded when w["dirs"] holds it;
    # w["trees"] holds the ids of loaded ones whose entries are as their tree object says, and
    # the root's; an unloaded one's id is its entry in its parent.

    # A load or a priming is under way (expect() counts it before the request that starts it is
    # answered): a save waits for it, up to PRIME_WAIT seconds, rather than leave a session's
    # first checkpoint to its script.
    def expect(self):
        with self.lock:
            self.pending += 1

    def loaded(self, model, epoch):
        with self.lock:
            self.pending = max(0, self.pending - 1)
            if model is not None and self.watch.tree_epoch == epoch:
                self.model = model
            self.idle.notify_all()

    # Whether it holds a tree (none under way) whose changes since the watch can name.
    # (One under way, a warm box's priming that has not ended, serves as well: its epoch is kept.)
    def vouches(self):
        with self.lock:
            if self.model is None and not self.pending:
                return False
        return self.watch.tree_vouches()

    # The tree writer holds nothing from here on (a request that resets the watch's account of
    # the tree is about to run: the tree it held would not match that account).
    def forget(self):
        with self.lock:
            self.model = None

    # The model from checkpoint commit K, which a script just saved (in the background: the next
    # save waits for it, briefly): w as K holds it, the base K's parent.
    def load(self, commit, epoch):
        model = None
        try:
            out = git([b"rev-parse", commit + b"^", commit + b":w"]).split()
            if len(out) != 2:
                raise Decline("git rev-parse answered oddly")
            model = self.model_of(out[1], out[0])
        except Exception as error:
            self.declined("the tree could not be read: %s" % (str(error) or type(error).__name__))
        finally:
            self.loaded(model, epoch)

    # The model from the diff's index, as a session's start left it (a request that brought it up
    # to date with the watch's account of the tree reset): a session's first checkpoint then
    # writes what changed since, not every tree. git write-tree reads a copy of that index: on
    # the index itself it would take its lock (a diff beside it would fail) and may write it. Any
    # later version of the index serves as well as the one the request left: each path it holds
    # as changed since is in the watch's account too, and is read again by the save.
    def prime(self, index, base_ref, epoch, read_all=False):
        model, copy = None, None
        try:
            body = read_regular(index, MAX_INDEX + 1)
            if body is None or len(body) > MAX_INDEX:
                raise Decline("the diff's index is not a plain file of at most %d bytes" % MAX_INDEX)
            fd, copy = tempfile.mkstemp(prefix=b".drydock-prime-", dir=b"/tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            # (Two gits at once: each waits on its own start and files.)
            # (A warm box's has no base yet: its session's copy-in sets it, and the first save
            # counts the changes from it.)
            tree, base = git_beside([b"for-each-ref", b"--format=%(objectname)", base_ref],
                                    lambda: git([b"write-tree"], extra={b"GIT_INDEX_FILE": copy}))
            model = self.model_of(tree.strip(), base.strip() or None)
            if read_all and len(body) <= READ_ALL_MAX_INDEX:
                self.read_all(model["w"])
            if not read_all:
                self.index_ahead()
        except Exception as error:
            self.declined("the tree could not be primed: %s" % (str(error) or type(error).__name__))
        finally:
            if copy is not None:
                for path in (copy, copy + b".lock"):
                    try:
                        os.unlink(path)
                    except OSError:
                        pass
            self.loaded(model, epoch)

    # A session's start on a warm box whose tree the writer kept (primed in the pool, before the
    # session's copy-in set the base): what differs is counted from that base now, in the
    # background, rather than by the session's first save. The tree is taken out while that runs
    # (a save that stops waiting leaves itself to the script).
    def rebase_to(self, base_ref, epoch):
        model = None
        try:
            with self.lock:
                self.idle.wait_for(lambda: self.pending <= 1, PRIME_WAIT)
                model, self.model = self.model, None
            trees = model["w"]["trees"] if model is not None else {}
            if b"" in trees:
                base = git([b"for-each-ref", b"--format=%(objectname)", base_ref]).strip()
                if len(base) == 40 and base != model["base_commit"]:
                    batch = Batch()
                    try:
                        self.rebase(model, base, trees[b""].hex().encode(), batch)
                        self.load_dirs(model["w"], {path.rpartition(b"/")[0] for path in model["was"]}, batch)
                    finally:
                        batch.close()
            self.index_ahead()
        except Exception as error:
            model = None
            self.declined("the tree's base could not be read: %s" % (str(error) or type(error).__name__))
        finally:
            self.loaded(model, epoch)

    # The agent's index as the blob a save holds (i), written ahead at a session's start: at
    # 10,000 files compressing it is some 10 ms of the first save's. If the agent changes its
    # index first, the save writes the new one and this one waits for git's gc, as any object no
    # ref names. Nothing here is relied on: any failure leaves it to the save.
    def index_ahead(self):
        path = ROOT + b"/.git/index"
        try:
            st = os.lstat(path)
            if not stat_.S_ISREG(st.st_mode) or st.st_size > MAX_INDEX:
                return
            body = read_regular(path, st.st_size + 1)
            if body is not None and len(body) == st.st_size:
                objects = Objects(ROOT)
                objects.check()
                objects.write(b"blob", body)
        except Exception:
            pass

    # A lazy model of tree `tree` whose base is commit `base` (None: not known yet), with what
    # differs from the base, the sizes of its files and the trees of the directories that hold
    # them read (by one cat-file, here in the background rather than in the next save).
    def model_of(self, tree, base):
        if len(tree) != 40 or (base is not None and len(base) != 40):
            raise Decline("not an object id")
        w = {"dirs": {}, "trees": {b"": bytes.fromhex(tree.decode())}}
        model = {"w": w, "base_commit": base, "was": {}, "sizes": {}}
        if base is None:
            return model
        batch = Batch()
        try:
            self.rebase(model, base, tree, batch)
            self.load_dirs(w, {path.rpartition(b"/")[0] for path in model["was"]}, batch)
        finally:
            batch.close()
        return model

    # What differs between commit `base` and tree `tree` (w as it is), as git diff-tree -r finds
    # it, becomes the model's account of what differs from its base, with the sizes of the files.
    def rebase(self, model, base, tree, batch):
        diff = git([b"diff-tree", b"-r", b"-z", b"--no-renames", base, tree]).split(b"\0")
        was, wanted = {}, []
        for i in range(0, len(diff) - 1, 2):
            old_mode, new_mode, old_sha, new_sha, _ = diff[i][1:].split(b" ")
            was[diff[i + 1]] = None if old_mode == b"000000" else (old_mode, bytes.fromhex(old_sha.decode()))
            if new_mode not in (b"000000", b"160000"):
                wanted.append(new_sha)
        sizes = {}
        if wanted:
            for sha, _, _, size in batch.ask([b"info " + sha for sha in wanted], sizes=True):
                if sha is None:
                    raise Decline("an object of the tree is missing")
                sizes[bytes.fromhex(sha.decode())] = size
        model["was"], model["sizes"], model["base_commit"] = was, sizes, base

    # Every tree of w, read ahead (a warm box's priming, while it waits in the pool for a session:
    # the session's first save then reads none). One ls-tree; a tree of more entries than
    # READ_ALL_MAX_INDEX allows stays lazy.
    def read_all(self, w):
        dirs, trees = {b"": {}}, {b"": w["trees"][b""]}
        out = git([b"ls-tree", b"-r", b"-t", b"-z", b"--full-tree", w["trees"][b""].hex().encode()])
        for item in out.split(b"\0"):
            if not item:
                continue
            head, path = item.split(b"\t", 1)
            mode, kind, hexsha = head.split(b" ")
            sha = bytes.fromhex(hexsha.decode())
            parent, _, name = path.rpartition(b"/")
            if kind == b"tree":
                mode = TREE_MODE
                dirs.setdefault(path, {})
                trees[path] = sha
            dirs.setdefault(parent, {})[name] = (mode, sha)
        w["dirs"], w["trees"] = dirs, trees

    # Reads the tree objects of the directories in `wanted` and of every directory on the way to
    # them that w holds, a depth at a time (one question to git per depth, not per directory).
    def load_dirs(self, w, wanted, batch=None):
        dirs, trees = w["dirs"], w["trees"]
        chains = set()
        for d in wanted:
            while d not in dirs and d not in chains:
                chains.add(d)
                if not d:
                    break
                d = d.rpartition(b"/")[0]
        if not chains:
            return
        for depth in sorted({depth_of(d) for d in chains}):
            asked = []
            for d in chains:
                if d in dirs or depth_of(d) != depth:
                    continue
                if not d:
                    asked.append((d, trees[b""]))
                    continue
                parent, _, name = d.rpartition(b"/")
                found = dirs.get(parent, {}).get(name)
                if found is not None and found[0] == TREE_MODE and found[1] is not None:
                    asked.append((d, found[1]))
            if not asked:
                continue
            if batch is None:
                if self.batch is None:
                    self.batch = Batch()
                batch = self.batch
            answers = batch.ask([b"contents " + sha.hex().encode() for _, sha in asked])
            for (d, sha), (_, kind, body) in zip(asked, answers):
                if kind != b"tree":
                    raise Decline("a tree of the model is missing")
                dirs[d] = parse_tree(body)
                trees[d] = sha

    # The file (mode, sha) at path in w, or None.
    def entry(self, w, path):
        parent, _, name = path.rpartition(b"/")
        self.load_dirs(w, [parent])
        found = w["dirs"].get(parent, {}).get(name)
        return None if found is None or found[0] == TREE_MODE else found

    # Every file at or under rel in w, as path -> (mode, sha).
    def files_under(self, w, rel):
        found = {}
        top = self.entry(w, rel)
        if top is not None:
            found[rel] = top
        self.load_dirs(w, [rel])
        level = [rel] if rel in w["dirs"] else []
        while level:
            self.load_dirs(w, level)
            below = []
            for d in level:
                for name, (mode, sha) in w["dirs"].get(d, {}).items():
                    sub = d + b"/" + name
                    if mode == TREE_MODE:
                        below.append(sub)
                    else:
                        found[sub] = (mode, sha)
            level = below
        return found

    # Paths that differ from the base, and the bytes of those that are files now, as git
    # diff-tree -r counts them (a gitlink is a path, and no bytes).
    def count(self, model):
        w, was, sizes = model["w"], model["was"], model["sizes"]
        files = changed = 0
        kept = {}
        self.load_dirs(w, {path.rpartition(b"/")[0] for path in was})
        for path in list(was):
            now = self.entry(w, path)
            if now == was[path]:
                del was[path]
                continue
            files += 1
            if now is not None and now[0] != b"160000":
                changed += sizes[now[1]]
                kept[now[1]] = sizes[now[1]]
        model["sizes"] = kept
        return files, changed

    # --- bringing w up to date ---

    def open_dir(self, parts):
        fd = os.open(ROOT, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in parts:
                nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = nfd
        except OSError:
            os.close(fd)
            return -1
        return fd

    # (mode, sha, size) of the file or link at rel as git add would store it; None when it is
    # not there (or a directory on its way is not one).
    def blob_of(self, rel):
        parts = rel.split(b"/")
        fd = self.open_dir(parts[:-1])
        if fd < 0:
            return None
        try:
            try:
                st = os.lstat(parts[-1], dir_fd=fd)
            except (FileNotFoundError, NotADirectoryError):
                return None
            if stat_.S_ISLNK(st.st_mode):
                body = os.readlink(parts[-1], dir_fd=fd)
                return b"120000", self.objects.write(b"blob", body), len(body)
            if stat_.S_ISDIR(st.st_mode):
                return self.gitlink(rel)
            if not stat_.S_ISREG(st.st_mode) or st.st_size > MAX_FILE or st.st_nlink > 1:
                raise Decline("not a plain file")
            ffd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            with os.fdopen(ffd, "rb") as f:
                st = os.fstat(f.fileno())
                body = f.read(MAX_FILE + 1)
            if not stat_.S_ISREG(st.st_mode) or len(body) != st.st_size:
                raise Decline("a file changed while read")
            mode = b"100755" if st.st_mode & 0o100 else b"100644"
            return mode, self.objects.write(b"blob", body), len(body)
        finally:
            os.close(fd)

    def drop(self, w, rel):
        # Removes rel (a file, or a directory with all under it) from w.
        parent, _, name = rel.rpartition(b"/")
        self.load_dirs(w, [parent])
        entries = w["dirs"].get(parent)
        if entries is None or name not in entries:
            return
        mode, _ = entries.pop(name)
        if mode == TREE_MODE:
            prefix = rel + b"/"
            for d in [d for d in w["dirs"] if d == rel or d.startswith(prefix)]:
                del w["dirs"][d]
                w["trees"].pop(d, None)
        self.touch(w, parent)

    def touch(self, w, d):
        while True:
            w["trees"].pop(d, None)
            if not d:
                return
            d = d.rpartition(b"/")[0]

    def put(self, w, rel, mode, sha):
        parts = rel.split(b"/")
        self.load_dirs(w, [rel.rpartition(b"/")[0]])
        d = b""
        for part in parts[:-1]:
            entries = w["dirs"].setdefault(d, {})
            sub = d + b"/" + part if d else part
            have = entries.get(part)
            if have is None or have[0] != TREE_MODE:
                if have is not None:
                    self.drop(w, sub)
                entries[part] = (TREE_MODE, None)
                w["dirs"].setdefault(sub, {})
            d = sub
        entries = w["dirs"].setdefault(d, {})
        have = entries.get(parts[-1])
        if have is not None and have[0] == TREE_MODE:
            self.drop(w, rel)
        entries[parts[-1]] = (mode, sha)
        self.touch(w, d)

    def refresh(self, model, rels):
        w, sizes = model["w"], model["sizes"]
        if not rels:
            return
        paths, repos = set(), {}
        for rel in rels:
            parts = rel.split(b"/")
            if b".git" in parts:
                parts = parts[:parts.index(b".git")]
            # Inside a nested repository: that repository, one entry (its commit).
            for i in range(1, len(parts)):
                up = b"/".join(parts[:i])
                if up not in repos:
                    repos[up] = os.path.lexists(ROOT + b"/" + up + b"/.git")
                if repos[up]:
                    parts = parts[:i]
                    break
            rel = b"/".join(parts)
            if not rel or parts[-1] == b".gitattributes":
                raise Decline("a change at the root or to attributes")
            paths.add(rel)
        # Git's word on which paths under the changed ones the diff's index would hold (a
        # nested repository not yet in it is listed as "dir/").
        listed = git([b"ls-files", b"-z", b"--cached", b"--others", b"--exclude-standard", b"--"] + sorted(paths),
                     extra={b"GIT_INDEX_FILE": self.index})
        keep = {path.rstrip(b"/") for path in listed.split(b"\0") if path}
        for path in keep:
            # A path under another (files git tracks inside what is now a repository): git's
            # answer for those is not this writer's to guess.
            up = path
            while b"/" in up:
                up = up.rpartition(b"/")[0]
                if up in keep:
                    raise Decline("a path under another")
        was, old = model["was"], {}
        for rel in paths:
            for path, value in self.files_under(w, rel).items():
                was.setdefault(path, value)
                old[path] = value
            self.drop(w, rel)
        for path in sorted(keep):
            if path in old and path not in paths and path not in rels:
                # Under a directory that changed, a file that did not: the watch names every file
                # written, so this one is as it was, and git, whose index entry is stat-clean,
                # would not read it again either.
                self.put(w, path, *old[path])
                continue
            found = self.blob_of(path)
            if found is None:
                continue
            mode, sha, size = found
            sizes[sha] = size
            was.setdefault(path, None)
            self.put(w, path, mode, sha)

    # The commit a nested repository's HEAD names, as git add stores it (a gitlink).
    def gitlink(self, rel):
        full = ROOT + b"/" + rel
        if not os.path.lexists(full + b"/.git"):
            raise Decline("a directory where git holds a file")
        sha = git([b"rev-parse", b"--verify", b"HEAD^{commit}"], extra={b"GIT_CEILING_DIRECTORIES": ROOT},
                  cwd=full).strip()
        if len(sha) != 40:
            raise Decline("a nested repository without a commit")
        return b"160000", bytes.fromhex(sha.decode()), 0

    def write_trees(self, w, d=b""):
        sha = w["trees"].get(d)
        if sha is not None:
            return sha
        entries = w["dirs"].get(d, {})
        items = []
        for name in list(entries):
            mode, sha = entries[name]
            if mode == TREE_MODE:
                sub = d + b"/" + name if d else name
                if sub not in w["dirs"]:
                    # Not read, so not changed: as its tree object says.
                    if sha is None:
                        raise Decline("a new directory with no entries read")
                    items.append((tree_key(name, mode), mode, name, sha))
                    continue
                sha = self.write_trees(w, sub)
                if sha is None:
                    del entries[name]
                    w["dirs"].pop(sub, None)
                    continue
                entries[name] = (mode, sha)
            items.append((tree_key(name, mode), mode, name, sha))
        if not items and d:
            return None
        items.sort()
        sha = self.objects.write(b"tree", b"".join(m + b" " + n + b"\0" + s for _, m, n, s in items))
        w["trees"][d] = sha
        return sha

    # --- the save ---

    def save(self, req):
        with self.lock:
            if self.pending:
                self.idle.wait_for(lambda: not self.pending, PRIME_WAIT)
            model = self.model
            self.model = None
            if model is None:
                return self.declined("no tree yet")
            if not self.settings_plain():
                return self.declined("attributes or a config that changes what git stores")
            rels = self.watch.tree_take()
            if rels is None:
                return self.declined("the watch cannot vouch for the changes")
            try:
                answer = self.save_with(model, req, rels)
            except Exception as error:
                self.watch.tree_lost()
                return self.declined(str(error) or type(error).__name__)
            finally:
                if self.batch is not None:
                    self.batch.close()
                    self.batch = None
            self.model = model
            return answer

    def declined(self, why):
        return left_to_script("tree writer: the script saves", why)

    def save_with(self, model, req, rels):
        self.objects = Objects(ROOT)
        self.objects.check()
        self.index = req["index"].encode()
        if not os.path.isfile(self.index):
            raise Decline("no diff index")
        _, refs_out = git_beside([b"for-each-ref", b"--format=%(objectname) %(refname) %(symref)"],
                                 lambda: self.refresh(model, rels))
        w = model["w"]
        wtree = self.write_trees(w)
        named, base = parse_refs(refs_out, req["baseRef"].encode())
        refs = [sha + b" " + ref for ref, sha in named.items()]
        if base is None or len(base) != 40:
            raise Decline("no base")
        if base != model["base_commit"]:
            # A warm box's tree, primed before its session set the base (or the base moved): what
            # differs is counted from this base, over the tree just written.
            if self.batch is None:
                self.batch = Batch()
            self.rebase(model, base, wtree.hex().encode(), self.batch)
        refs_text = b"\n".join(refs)
        head = read_regular(ROOT + b"/.git/HEAD", 4096) if not os.path.islink(ROOT + b"/.git/HEAD") else None
        if head is None:
            raise Decline("HEAD is not a file")
        head = head.split(b"\n")[0].strip(b" \t")
        if not (
                head.startswith(b"ref: refs/") or (len(head) == 40 and all(c in b"0123456789abcdef" for c in head))):
            raise Decline("HEAD is not plain")
        o = self.objects
        entries = [(b"h", b"100644", o.write(b"blob", head)), (b"r", b"100644", o.write(b"blob", refs_text)),
                   (b"w/", TREE_MODE, wtree)]
        index_bytes = 0
        agent_index = ROOT + b"/.git/index"
        if os.path.lexists(agent_index):
            st = os.stat(agent_index)
            body = read_regular(agent_index, st.st_size + 1)
            if body is None or len(body) != st.st_size:
                raise Decline("the index is not a plain file")
            index_bytes = len(body)
            entries.append((b"i", b"100644", o.write(b"blob", body)))
            entries.append((b"m", b"100644", o.write(b"blob", b"%d\n" % int(st.st_mtime))))
        entries.sort()
        top = o.write(b"tree", b"".join(m + b" " + n.rstrip(b"/") + b"\0" + s for n, m, s in entries))
        now = int(time.time())
        offset = time.localtime(now).tm_gmtoff // 60
        zone = b"%s%02d%02d" % (b"-" if offset < 0 else b"+", abs(offset) // 60, abs(offset) % 60)
        who = b"drydock <drydock@localhost> %d %s" % (now, zone)
        commit = o.write(b"commit", b"tree %s\nparent %s\nauthor %s\ncommitter %s\n\ndrydock checkpoint\n" % (
            top.hex().encode(), base, who, who)).hex().encode()
        files, changed = self.count(model)
        total = changed + index_bytes + len(refs_text)
        if total > int(req["max"]):
            return 0, b"over %d %d\n" % (total, files), b""
        slot = req["slot"].encode()
        updates = [b"update %s/%s %s\n" % (req["checkpointRefs"].encode(), slot, commit)]
        seen = {}
        for line in refs:
            sha = line.split(b" ")[0]
            if sha not in seen:
                seen[sha] = len(seen) + 1
                updates.append(b"update %s/%s/%d %s\n" % (req["keepRefs"].encode(), slot, seen[sha], sha))
        git([b"update-ref", b"--stdin"], stdin=b"".join(updates))
        out = b"saved %s %d %d fast\n" % (commit, total, files)
        if req.get("shell"):
            # As the script's head -c: a shell state the agent broke fails the call.
            state = read_regular(req["shellFile"].encode(), int(req["shellMax"]))
            if state is None:
                return 1, out, b"the shell's state is not a readable file\n"
            out += state
        return 0, out, b""
