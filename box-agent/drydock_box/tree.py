"""The tree writer: the git tree of /workspace kept in the agent's memory between requests and
brought up to date from the box's watch (watch.py), so that a checkpoint's save writes the few
objects that changed with no git process for the working tree, where its script (src/workspace/
checkpoint-script.ts) runs ten: `git add` and `write-tree` each read and write the whole index
(about 30 ms at 10,000 files in a one-CPU box) and each git costs a few ms to start.

A request that names `"fast": {"op": "save", …}` is served here when the tree writer can vouch
for what it holds, and by its script otherwise, which gives the same answer: the save's script
is then run as any request, and the tree it wrote (`<checkpoint>:w`) is read back, in the
background, as the tree from which the next save starts. The tree writer answers for nothing
it did not see: it declines (and the script runs) whenever the watch cannot vouch for the
paths changed since (the same cases as for the diff's index, plus more than MAX_PATHS changed),
another request that took changes still runs, git's config or the box's attributes could make
`git add` store other bytes than the file's (filters, line endings, core.fileMode,
core.symlinks, core.ignoreCase, a SHA-256 repository), a changed path is in a nested
repository, is not a file, a link or a directory, or is over MAX_FILE bytes, or anything fails.

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
import threading
import time

from .files import read_regular
from .gitutil import (
    FALSE,
    MAX_FILE,
    ROOT,
    TREE_MODE,
    TRUE,
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


class TreeWriter:
    def __init__(self, watch):
        self.watch = watch
        self.lock = threading.Lock()
        self.model = None

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

    # The model from checkpoint commit K, which a script just saved (in the background: the next
    # save waits for nothing; until it is here, saves run their script): w's entries from
    # ls-tree, and what differs from the base from diff-tree, with the sizes of its files.
    def load(self, commit, epoch):
        try:
            base = git([b"rev-parse", commit + b"^"]).strip()
            model = {"w": self.read_tree(commit + b":w"), "base_commit": base, "was": {}, "sizes": {}}
            diff = git([b"diff-tree", b"-r", b"-z", b"--no-renames", base, commit + b":w"]).split(b"\0")
            was, wanted = model["was"], []
            for i in range(0, len(diff) - 1, 2):
                old_mode, new_mode, old_sha, new_sha, _ = diff[i][1:].split(b" ")
                was[diff[i + 1]] = None if old_mode == b"000000" else (old_mode, bytes.fromhex(old_sha.decode()))
                if new_mode not in (b"000000", b"160000"):
                    wanted.append(new_sha)
            if wanted:
                out = git([b"cat-file", b"--batch-check=%(objectname) %(objectsize)"],
                          stdin=b"".join(sha + b"\n" for sha in wanted))
                for line in out.split(b"\n"):
                    if line:
                        hexsha, size = line.split(b" ")
                        model["sizes"][bytes.fromhex(hexsha.decode())] = int(size)
        except Exception as error:
            self.declined("the tree could not be read: %s" % (str(error) or type(error).__name__))
            return
        with self.lock:
            if self.watch.tree_epoch == epoch:
                self.model = model

    def read_tree(self, tree):
        dirs, trees = {b"": {}}, {}
        out = git([b"ls-tree", b"-r", b"-t", b"-z", b"--full-tree", tree])
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
        return {"dirs": dirs, "trees": trees}

    # The file (mode, sha) at path in w, or None.
    def entry(self, w, path):
        parent, _, name = path.rpartition(b"/")
        found = w["dirs"].get(parent, {}).get(name)
        return None if found is None or found[0] == TREE_MODE else found

    # Every file at or under rel in w, as path -> (mode, sha).
    def files_under(self, w, rel):
        found = {}
        top = self.entry(w, rel)
        if top is not None:
            found[rel] = top
        todo = [rel] if rel in w["dirs"] else []
        while todo:
            d = todo.pop()
            for name, (mode, sha) in w["dirs"].get(d, {}).items():
                sub = d + b"/" + name
                if mode == TREE_MODE:
                    todo.append(sub)
                else:
                    found[sub] = (mode, sha)
        return found

    # Paths that differ from the base, and the bytes of those that are files now, as git
    # diff-tree -r counts them (a gitlink is a path, and no bytes).
    def count(self, model):
        w, was, sizes = model["w"], model["was"], model["sizes"]
        files = changed = 0
        kept = {}
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
        if base is None or base != model["base_commit"]:
            raise Decline("the base moved")
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
