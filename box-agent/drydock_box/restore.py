"""A checkpoint's restore in the box agent, for the common case: the same steps as the restore's script
(src/workspace/checkpoint-script.ts, `restore`), the same gits for what git decides, and none of
the script's other processes. In a box a process costs 2 to 4 ms to start, and the script starts
about a dozen besides bash itself (cat, rm, touch, and a git for each part it reads); here one
`git cat-file --batch-command` reads every object the restore needs (the checkpoint's parts, the
objects it checks, the agent's index), and the box agent writes the shell's state and the agent's
index and its time itself. The gits left are those that decide: `for-each-ref`, the diff's index
brought up to date (`ls-files` and `update-index`, as add_changes in
src/workspace/changed-paths.ts), `diff-index` against the checkpoint's tree, `update-ref` when a
ref moved, and `git restore` writing the paths that differ.

A fork's export and import build on it (fork.py).

A request that names `"fast": {"op": "restore", …}` is served here when nothing is unusual, and
by its script otherwise, which gives the same answer or the same refusal: the box agent declines
(the script then runs, from the start) when the checkpoint's ref, its parts or the base are not
as a plain restore expects (a damaged or moved checkpoint: the script words the refusal), the
repository is not a plain `.git` directory, HEAD is not a plain file, the diff's index is
missing, the checkpoint carries an index as a delta (a fork's), any object it will read or a ref
will name is missing, or anything fails. The script then does the whole restore again, whatever
the box agent did before declining: it moves the workspace to the checkpoint from any state.
"""
import os
import stat as stat_
import subprocess
import threading
import time

from .files import read_regular
from .gitutil import GIT_TIMEOUT, ROOT, Batch, Decline, Objects, git_beside, git_env, left_to_script, parse_refs

AGENT_INDEX = ROOT + b"/.git/index"

# A new file beside the agent's index, for a rename over it (never written through a link the
# agent left there); its mode as bash gives a file it makes: 0666 less the umask.
def new_index_file(body):
    tmp = ROOT + b"/.git/index.drydock-" + os.urandom(8).hex().encode()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
    except BaseException:
        drop_file(tmp)
        raise
    return tmp

def drop_file(path):
    try:
        os.unlink(path)
    except OSError:
        pass

def is_id(text):
    return len(text) == 40 and all(c in b"0123456789abcdef" for c in text)

def run_git(args, index=None, stdin=None):
    extra = {b"GIT_INDEX_FILE": index} if index else None
    proc = subprocess.run([b"git"] + args, cwd=ROOT, env=git_env(extra), input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=GIT_TIMEOUT)
    return proc.returncode, proc.stdout

class Restorer:
    def __init__(self, watch):
        self.watch = watch
        self.lock = threading.Lock()

    # Each answers as its script would, or None: the script then runs (declined).
    def restore(self, req, data):
        return self.serve(self.restore_with, req, data)

    def serve(self, work, req, data):
        with self.lock:
            batch = None
            try:
                batch = Batch()
                return work(req, data, batch)
            except Exception as error:
                return self.declined(str(error) or type(error).__name__)
            finally:
                if batch is not None:
                    batch.close()

    def plain_repository(self):
        Objects(ROOT).check()

    # The refs a checkpoint holds (its r: "<object> <name>" a line), by name.
    def kept(self, r):
        kept = {}
        for line in r.split(b"\n"):
            if line:
                sha, _, ref = line.partition(b" ")
                kept[ref] = sha
        return kept

    def declined(self, why):
        return left_to_script("restore: the script runs", why)

    def restore_with(self, req, data, batch):
        self.plain_repository()
        index = req["index"].encode()
        if not stat_.S_ISREG(os.lstat(index).st_mode):
            raise Decline("the diff's index is not a file")
        slot, k = req["slot"].encode(), req["commit"].encode()
        if not is_id(k) or not all(c in b"0123456789abcdef" for c in slot):
            raise Decline("not a checkpoint's name")

        # What is there now: the refs (but drydock's and symbolic ones), the base, HEAD; the git
        # that lists the refs runs while the one that reads objects starts and answers.
        parts, out = git_beside([b"for-each-ref", b"--format=%(objectname) %(refname) %(symref)"], lambda: batch.ask([
            b"info %s/%s^{commit}" % (req["checkpointRefs"].encode(), slot), b"info %s:w" % k,
            b"contents %s:h" % k, b"contents %s:r" % k, b"contents %s:i" % k, b"contents %s:m" % k,
            b"info %s:d" % k]))
        refs_now, base = parse_refs(out, req["baseRef"].encode())
        if base is None or not is_id(base):
            raise Decline("no base")
        head_now = self.head()

        # The checkpoint: its ref still names it, and its parts are as a save writes them.
        (ref_k, ref_type, _), (w, w_type, _), (_, h_type, h), (_, r_type, r), (i, i_type, i_body), \
            (_, m_type, m), (d, _, _) = parts
        (_, base_tree_type, _), (_, base_type, _) = batch.ask([b"info %s^{tree}" % base, b"info %s^{commit}" % base])
        if ref_type != b"commit" or ref_k != k or w_type != b"tree" or h_type != b"blob" or r_type != b"blob":
            raise Decline("the checkpoint is not as saved")
        if base_tree_type != b"tree" or base_type != b"commit":
            raise Decline("the base is not whole")
        if d is not None:
            raise Decline("an index as a delta")
        if i is not None and i_type != b"blob":
            raise Decline("the index is not a blob")
        kept = self.kept(r)
        m_time = 0
        if m_type == b"blob":
            text = m.strip()
            if text.isdigit():
                m_time = int(text)

        # From here on the workspace changes. The shell's state first, as the script's cat does.
        # (Modes as bash gives a file it makes: 0666 less the umask.)
        if req.get("shell"):
            fd = os.open(req["shellFile"].encode(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        work_index = req["workIndex"].encode()
        if os.path.lexists(work_index):
            os.unlink(work_index)

        # The diff's index brought up to date over the paths the watch saw change (add_changes).
        found, whole = None, False
        try:
            found, whole = self.watch.take(False, False)
        except Exception:
            self.watch.dead = True
        ok = False
        try:
            self.add_changes(index, found)
            answer = self.move(req, index, batch, w, kept, refs_now, h, head_now, i, i_body, m_time)
            ok = True
            return answer
        finally:
            self.watch.done(ok, whole)

    def head(self):
        path = ROOT + b"/.git/HEAD"
        text = None if os.path.islink(path) else read_regular(path, 4096)
        if text is None:
            raise Decline("HEAD is not a file")
        text = text.split(b"\n")[0].strip(b" \t")
        if not (text.startswith(b"ref: refs/") or is_id(text)):
            raise Decline("HEAD is not plain")
        return text

    def add_changes(self, index, found):
        if found is not None:
            paths, gone = found
            named = list(gone) + list(paths)
            if not named:
                return
            code, out = run_git([b"ls-files", b"-z", b"-t", b"--cached", b"--others", b"--exclude-standard", b"--"]
                                + named, index=index)
            if code == 0:
                held, new = [], []
                for entry in out.split(b"\0"):
                    if entry:
                        (new if entry.startswith(b"? ") else held).append(entry[2:])
                listed = held + [p[:-1] if p.endswith(b"/") else p for p in new]
                if not listed:
                    return
                code, _ = run_git([b"update-index", b"--add", b"--remove", b"--replace", b"-z", b"--stdin"],
                                  index=index, stdin=b"".join(p + b"\0" for p in listed))
                if code == 0:
                    return
        code, _ = run_git([b"add", b"-A"], index=index)
        if code != 0:
            raise Decline("git add failed")

    def move(self, req, index, batch, w, kept, refs_now, h, head_now, i, i_body, m_time):
        files, paths, wanted, links = self.differing(index, w)
        wanted += list(kept.values())
        if wanted:
            for sha, _, _ in batch.ask([b"info " + x for x in wanted]):
                if sha is None:
                    raise Decline("an object the restore reads is missing")
        self.put_refs([], kept, refs_now, h, head_now)

        # The agent's index, byte for byte, with its own time.
        if i is None:
            if os.path.lexists(AGENT_INDEX):
                os.unlink(AGENT_INDEX)
        else:
            tmp = new_index_file(i_body)
            try:
                if m_time > 0:
                    os.utime(tmp, (time.time(), m_time))
                os.rename(tmp, AGENT_INDEX)
            except BaseException:
                drop_file(tmp)
                raise
        self.write_files(index, w, files, paths, links)
        return 0, b"restored %d fast\n" % files, b""

    # Every path where the index (the working tree now) differs from tree w: how many, those to
    # name to git (none under another named), the objects w has there, and nested repositories.
    def differing(self, index, w):
        code, out = run_git([b"diff-index", b"--cached", b"--no-renames", b"-z", b"--raw", w], index=index)
        if code != 0:
            raise Decline("a tree of the checkpoint is missing")
        fields = out.split(b"\0")
        files, named, paths, wanted, links = 0, set(), [], [], []
        for at in range(0, len(fields) - 1, 2):
            record, path = fields[at], fields[at + 1]
            # ":<mode in w> <mode now> <object in w> <object now> <status>"
            words = record[1:].split(b" ")
            if len(words) < 5:
                raise Decline("git diff-index answered oddly")
            files += 1
            named.add(path)
            if words[0] not in (b"000000", b"160000"):
                wanted.append(words[2])
            if words[0] == b"160000" or words[1] == b"160000":
                links.append(path)
            up, under = path, False
            while b"/" in up:
                up = up.rsplit(b"/", 1)[0]
                if up in named:
                    under = True
                    break
            if not under:
                paths.append(path)
        return files, paths, wanted, links

    # Refs and HEAD, each written as itself (no-deref), only where they differ; after the
    # updates given first (an import's base and checkpoint refs, in the same transaction).
    def put_refs(self, first, kept, refs_now, h, head_now, keep=None):
        updates = list(first)
        for ref in refs_now:
            if ref not in kept:
                updates.append(b"option no-deref\ndelete %s\n" % ref)
        for ref, sha in kept.items():
            if refs_now.get(ref) != sha:
                updates.append(b"option no-deref\nupdate %s %s\n" % (ref, sha))
        if keep is not None:
            # The objects the refs name, kept alive under the checkpoint's slot (keep_updates).
            seen = {}
            for sha in kept.values():
                if sha not in seen:
                    seen[sha] = len(seen) + 1
                    updates.append(b"update %s/%d %s\n" % (keep, seen[sha], sha))
        if updates and run_git([b"update-ref", b"--stdin"], stdin=b"".join(updates))[0] != 0:
            raise Decline("git update-ref failed")
        if h != head_now:
            if h.startswith(b"ref: refs/"):
                args = [b"symbolic-ref", b"HEAD", h[5:]]
            elif is_id(h):
                args = [b"update-ref", b"--no-deref", b"HEAD", h]
            else:
                raise Decline("the checkpoint's HEAD is not plain")
            if run_git(args)[0] != 0:
                raise Decline("HEAD could not be put back")

    # The files: those that differ written from w or removed, by one git; a repository inside
    # the workspace is left as it is, and the diff's index says where it is.
    def write_files(self, index, w, files, paths, links):
        if files > 256:
            code, _ = run_git([b"read-tree", b"--reset", b"-u", w], index=index)
        elif paths:
            # (No preload: it looks at the named entries' files from threads, which in a box held to
            # one CPU only wait on each other: about 5 ms of 29 at 10,000 files.)
            code, _ = run_git([b"-c", b"core.hooksPath=/dev/null", b"-c", b"core.preloadIndex=false", b"restore", b"-q",
                               b"--source=" + w, b"--staged",
                               b"--worktree", b"--pathspec-from-file=-", b"--pathspec-file-nul"],
                              index=index, stdin=b"".join(p + b"\0" for p in paths))
        else:
            code = 0
        if code != 0:
            raise Decline("git could not write the files")
        if links:
            code, _ = run_git([b"update-index", b"--add", b"--remove", b"--replace", b"-z", b"--stdin"], index=index,
                              stdin=b"".join(p + b"\0" for p in links))
            if code != 0:
                run_git([b"add", b"-A"], index=index)
