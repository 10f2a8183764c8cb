"""What the tree writer, the restore and the fork know of git: running a git that cannot hold
them (a time limit, a plain environment, literal pathspecs), writing objects as git writes loose
ones (zlib at git's default level for them, mode 0444, linked into place, never over one that is
there), and reading the few config keys that change what `git add` stores. (Writing objects here,
not with `git hash-object`, is what spares a save its processes; git's own commands read and write
every object the same way, and the tree writer's test checks every object it writes with
`git fsck --strict`.)
"""
import hashlib
import os
import select
import stat as stat_
import subprocess
import sys
import tempfile
import threading
import time
import zlib

ROOT = b"/workspace"

MAX_FILE = 16 << 20
TREE_MODE = b"40000"

class Decline(Exception):
    pass

# The environment the save's script would have (the program's own), so that git reads the same
# config and ignore files for both, with the script's settings.
def git_env(extra=None):
    env = dict(os.environb)
    env.update({b"LC_ALL": b"C", b"GIT_TERMINAL_PROMPT": b"0", b"GIT_NO_REPLACE_OBJECTS": b"1",
                b"GIT_LITERAL_PATHSPECS": b"1"})
    if extra:
        env.update(extra)
    return env

# A git that blocks (a FIFO the agent put where git reads) must not hold the writer: its request
# cannot be killed as a script's can. Past GIT_TIMEOUT it is, and the script runs instead.
GIT_TIMEOUT = 30

def git(args, extra=None, stdin=None, cwd=None):
    proc = subprocess.run([b"git"] + args, cwd=cwd or ROOT, env=git_env(extra), input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=GIT_TIMEOUT)
    if proc.returncode != 0:
        raise Decline("git %s failed" % args[0].decode())
    return proc.stdout

# A git run while work() runs (each waits on its own start and files), its output read after,
# with the same time limit: (what work returned, what git printed); Decline when git fails.
# With index, the git reads that index file instead of the repository's; with stdin, those bytes
# are its input, written from a thread of their own (a git that stops reading holds nothing up).
def git_beside(args, work, index=None, stdin=None):
    fed = os.pipe() if stdin is not None else None
    try:
        proc = subprocess.Popen([b"git"] + args, cwd=ROOT, env=git_env({b"GIT_INDEX_FILE": index} if index else None),
                                stdin=fed[0] if fed else None, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except BaseException:
        if fed:
            os.close(fed[1])
        raise
    finally:
        if fed:
            os.close(fed[0])
    if fed:
        threading.Thread(target=feed_fd, args=(fed[1], stdin), daemon=True).start()
    try:
        done = work()
    finally:
        try:
            out = proc.communicate(timeout=GIT_TIMEOUT)[0]
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise Decline("git %s did not end" % args[0].decode()) from None
    if proc.returncode != 0:
        raise Decline("git %s failed" % args[0].decode())
    return done, out

# Writes data to a pipe's end and closes it; a reader gone (EPIPE) ends the write. (A pipe of its
# own, not Popen's stdin as the channel's feed() writes: communicate() after would flush a closed file.)
def feed_fd(fd, data):
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass
    finally:
        os.close(fd)

# A request the program leaves to its script, and why: to the channel's stderr, which the host
# logs at debug level. None, the answer a declined request gives.
def left_to_script(what, why):
    try:
        sys.stderr.write("%s: %s\n" % (what, why))
        sys.stderr.flush()
    except Exception:
        pass
    return None

# The refs of for-each-ref's "<object> <name> <symref>" lines but drydock's and symbolic ones
# (a symbolic ref follows its target), by name in git's order, and the base's object.
def parse_refs(out, base_ref):
    refs, base = {}, None
    for line in out.split(b"\n"):
        if not line:
            continue
        sha, ref, sym = (line.split(b" ") + [b""])[:3]
        if ref == base_ref:
            base = sha
        elif not ref.startswith(b"refs/drydock/") and not sym:
            refs[ref] = sha
    return refs, base


def tree_key(name, mode):
    return name + b"/" if mode == TREE_MODE else name

class Objects:
    def __init__(self, root):
        self.dir = root + b"/.git/objects"

    def check(self):
        for path in (ROOT + b"/.git", self.dir):
            if not stat_.S_ISDIR(os.lstat(path).st_mode):
                raise Decline("not a plain repository")

    def write(self, kind, body):
        data = b"%s %d\0" % (kind, len(body)) + body
        sha = hashlib.sha1(data).digest()
        hexsha = sha.hex().encode()
        sub = self.dir + b"/" + hexsha[:2]
        final = sub + b"/" + hexsha[2:]
        try:
            os.lstat(final)
            return sha
        except FileNotFoundError:
            pass
        try:
            os.mkdir(sub)
        except FileExistsError:
            pass
        fd, tmp = tempfile.mkstemp(dir=sub, prefix=b"tmp_obj_")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(zlib.compress(data, 1))
            os.chmod(tmp, 0o444)
            try:
                os.link(tmp, final)
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
        return sha

def parse_config(data):
    # The few keys that change what git add stores, from a config file's text; None when the
    # text is not plain enough to read here (the script then runs).
    found, section = {}, b""
    for raw in data.split(b"\n"):
        line = raw.strip()
        if not line or line[:1] in (b"#", b";"):
            continue
        if line[:1] == b"[":
            end = line.find(b"]")
            if end < 0 or line[end + 1:].strip()[:1] not in (b"", b"#", b";"):
                return None
            section = line[1:end].strip().lower()
            if b'"' in section or b"." in section:
                section = b"sub"
            continue
        if b"\\" in line or b'"' in line:
            if section == b"core" or section == b"extensions":
                return None
            continue
        key, _, value = line.partition(b"=")
        key = key.strip().lower()
        value = value.split(b"#")[0].split(b";")[0].strip().lower()
        found[section + b"." + key] = value
    return found

TRUE = (b"true", b"yes", b"on", b"1", b"")
FALSE = (b"false", b"no", b"off", b"0")

# The most bytes of one object a Batch reads (a restore's agent index is the largest).
MAX_OBJECT = 256 << 20

class Batch:
    # One git cat-file --batch-command for one restore or one save: questions written from a thread of their
    # own (many never fill both pipes), answers read with the restore's time limit.
    def __init__(self):
        self.proc = subprocess.Popen([b"git", b"cat-file", b"--batch-command"], cwd=ROOT, env=git_env(),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.fd = self.proc.stdout.fileno()
        self.buf = b""
        self.deadline = time.monotonic() + GIT_TIMEOUT

    def write(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except OSError:
            pass

    def fill(self):
        left = self.deadline - time.monotonic()
        if left <= 0 or not select.select([self.fd], [], [], left)[0]:
            raise Decline("git cat-file did not answer")
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise Decline("git cat-file ended")
        self.buf += chunk

    def line(self):
        while b"\n" not in self.buf:
            if len(self.buf) > 4096:
                raise Decline("git cat-file answered oddly")
            self.fill()
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def take(self, n):
        parts, size = [], 0
        while size < n:
            if not self.buf:
                self.fill()
            piece = self.buf[:n - size]
            self.buf = self.buf[len(piece):]
            parts.append(piece)
            size += len(piece)
        return b"".join(parts)

    # Each question "info <object>" or "contents <object>": (id, type, body or None), or
    # (None, None, None) for one that is not there; with sizes, each with the object's size last.
    def ask(self, questions, sizes=False):
        writer = threading.Thread(target=self.write, args=(b"".join(q + b"\n" for q in questions),), daemon=True)
        writer.start()
        answers = []
        for q in questions:
            words = self.line().split(b" ")
            if len(words) == 2 and words[1] in (b"missing", b"ambiguous"):
                answers.append((None, None, None, None) if sizes else (None, None, None))
                continue
            if len(words) != 3 or not words[2].isdigit():
                raise Decline("git cat-file answered oddly")
            body = None
            if q.startswith(b"contents "):
                size = int(words[2])
                if size > MAX_OBJECT:
                    raise Decline("an object too large")
                body = self.take(size)
                if self.take(1) != b"\n":
                    raise Decline("git cat-file answered oddly")
            answers.append((words[0], words[1], body, int(words[2])) if sizes else (words[0], words[1], body))
        writer.join(max(0.0, self.deadline - time.monotonic()))
        return answers

    # (Its end is waited for beside the answer, not before it.)
    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        threading.Thread(target=self.reap, daemon=True).start()

    def reap(self):
        try:
            self.proc.wait(timeout=GIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
