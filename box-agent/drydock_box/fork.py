"""A fork's two halves in the box agent, beside the restore they build on (restore.py): its export in
the source's box (`"op": "export"`, the script's export_pack in src/workspace/fork-script.ts) and
its import in a new box that holds files (`"op": "import"`, import_pack). The export reads the
checkpoint, the base commit and the objects the new box has with one cat-file, checks here that
the agent's index is plain, has `diff-index` give the index's delta and `pack-objects` the pack,
and writes the delta's blob and the fork's commit itself: the script's bytes, which a test
compares. The import checks the pack (`index-pack --strict`), writes the source's base commit from
its bytes, reads the checkpoint with one cat-file, writes the paths that differ as a restore does,
makes the agent's index from the diff's with the delta, and sets every ref in one `update-ref`.
Anything else (a box with no files yet, an index that travels whole, any failure) goes to the
script.
"""
import base64
import hashlib
import os
import stat as stat_
import struct
import subprocess
import threading

from .files import read_regular
from .gitutil import GIT_TIMEOUT, ROOT, TREE_MODE, Decline, Objects, git_beside, git_env, parse_refs
from .restore import AGENT_INDEX, Restorer, drop_file, is_id, new_index_file


# Whether an index file is plain (the script's plain_index): version 2, whole (its checksum), every
# entry at stage 0 with no flag (assume-unchanged, extended), and not sparse. A split index is left
# to the script: its entries are partly in .git/sharedindex.*, which git (the script's ls-files -v)
# reads and this program does not.
def plain_index(body):
    if len(body) < 32 or body[:4] != b"DIRC" or hashlib.sha1(body[:-20]).digest() != body[-20:]:
        return False
    version, count = struct.unpack(">II", body[4:12])
    if version != 2:
        return False
    at, end = 12, len(body) - 20
    for _ in range(count):
        if at + 62 > end or struct.unpack(">H", body[at + 60:at + 62])[0] & 0xf000:
            return False
        nul = body.find(b"\0", at + 62, end)
        if nul < 0:
            return False
        at += (62 + nul - (at + 62) + 8) & ~7
    while at + 8 <= end:
        if body[at:at + 4] == b"link":
            raise Decline("a split index")
        if body[at:at + 4] == b"sdir":
            return False
        at += 8 + struct.unpack(">I", body[at + 4:at + 8])[0]
    return at == end


# The pack of the objects "wanted" names (pack-objects' --revs input), cut once it passes "hold"
# bytes with the "before" bytes of its answer: git is stopped there, the answer goes past the
# host's cap (hold is that cap), and the host streams the pack from the script by an exec of its
# own rather than hold it (workspace/fork-pack-stream.ts).
def pack_up_to(wanted, hold, before):
    proc = subprocess.Popen([b"git", b"-c", b"pack.compression=1", b"pack-objects", b"--window=0", b"--revs",
                             b"--stdout", b"-q"], cwd=ROOT, env=git_env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    timer = threading.Timer(GIT_TIMEOUT, proc.kill)
    timer.start()

    def give():
        try:
            proc.stdin.write(wanted)
            proc.stdin.close()
        except OSError:
            pass
    writer = threading.Thread(target=give, daemon=True)
    writer.start()
    parts, size, over = [], before, False
    try:
        while True:
            chunk = proc.stdout.read1(1 << 16)
            if not chunk:
                break
            parts.append(chunk)
            size += len(chunk)
            if hold is not None and size > hold:
                over = True
                proc.kill()
                break
    finally:
        proc.stdout.close()
        code = proc.wait()
        timer.cancel()
        writer.join()
    if code != 0 and not over:
        raise Decline("git pack-objects failed")
    return b"".join(parts)


class Forker(Restorer):
    def import_(self, req, data):
        return self.serve(self.import_with, req, data)

    def export_(self, req, data):
        return self.serve(self.export_with, req, data)

    # A fork's import into its new box (the script's import_pack): the pack, the source's base
    # commit, then the restore of a box that holds what its diff's index says (a prefilled
    # commit: no change of the agent's to look for), the agent's index made from the diff's as
    # the checkpoint's delta changes it, and the refs with the base's and the checkpoint's own,
    # in one transaction.
    def import_with(self, req, data, batch):
        self.plain_repository()
        index = req["index"].encode()
        if not os.path.lexists(index) or not stat_.S_ISREG(os.lstat(index).st_mode):
            raise Decline("a box with no files yet")
        slot, k, base = req["slot"].encode(), req["commit"].encode(), req["baseCommit"].encode()
        if not is_id(k) or not is_id(base) or not slot or not all(c in b"0123456789abcdef" for c in slot):
            raise Decline("not a checkpoint's name")
        # The box's refs are listed while the pack is checked and the base commit written (neither
        # touches a ref).
        def unpack():
            proc = subprocess.run([b"git", b"index-pack", b"--stdin", b"--strict"], cwd=ROOT, env=git_env(), input=data,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=GIT_TIMEOUT)
            if proc.returncode != 0:
                raise Decline("git index-pack refused the pack")
            raw = base64.b64decode(req["baseRaw"], validate=True)
            if Objects(ROOT).write(b"commit", raw).hex().encode() != base:
                raise Decline("the source's base commit did not arrive whole")
            return batch.ask([
                b"info %s" % k, b"info %s:w" % k, b"contents %s:h" % k, b"contents %s:r" % k, b"info %s:i" % k,
                b"contents %s:d" % k, b"info %s^{tree}" % base, b"info %s^{commit}" % base])
        parts, out = git_beside([b"for-each-ref", b"--format=%(objectname) %(refname) %(symref)"], unpack)
        (_, k_type, _), (w, w_type, _), (_, h_type, h), (_, r_type, r), (i, _, _), (d, d_type, d_body), \
            (_, base_tree_type, _), (_, base_type, _) = parts
        if k_type != b"commit" or w_type != b"tree" or h_type != b"blob" or r_type != b"blob":
            raise Decline("the checkpoint is not whole")
        if base_tree_type != b"tree" or base_type != b"commit":
            raise Decline("the base is not whole")
        if i is not None or (d is not None and d_type != b"blob"):
            raise Decline("an index that is not a delta")
        refs_now = parse_refs(out, req["baseRef"].encode())[0]
        head_now = self.head()
        kept = self.kept(r)

        for left in (req["workIndex"].encode(), req["prefilledMark"].encode()):
            if os.path.lexists(left):
                os.unlink(left)
        files, paths, _, links = self.differing(index, w)
        self.write_files(index, w, files, paths, links)
        first = [b"update %s %s\n" % (req["baseRef"].encode(), base),
                 b"update %s/%s %s\n" % (req["checkpointRefs"].encode(), slot, k)]
        def put_refs():
            return self.put_refs(first, kept, refs_now, h, head_now, keep=b"%s/%s" % (req["keepRefs"].encode(), slot))
        if d is None:
            if os.path.lexists(AGENT_INDEX):
                os.unlink(AGENT_INDEX)
            put_refs()
        else:
            # The diff's index now holds w with this box's stat data; the delta makes it the agent's,
            # while the refs are put back (update-index writes only its own copy of the index).
            body = read_regular(index, os.lstat(index).st_size + 1)
            if body is None:
                raise Decline("the diff's index is not a plain file")
            tmp = new_index_file(body)
            try:
                git_beside([b"update-index", b"-z", b"--index-info"], put_refs, index=tmp, stdin=d_body)
                os.rename(tmp, AGENT_INDEX)
            except BaseException:
                drop_file(tmp)
                raise
        return 0, b"restored %d fast\n" % files, b""

    # A checkpoint taken out of its box for a fork (the script's export_pack): the base commit's
    # bytes (base64, a line), the commit the new box restores (a line: the checkpoint's, or one
    # made for forks with its index as a delta when that index is plain), then a pack of every
    # object that commit needs but those the new box has (data: their ids, a line each).
    def export_with(self, req, data, batch):
        self.plain_repository()
        slot, k = req["slot"].encode(), req["commit"].encode()
        if not is_id(k) or not slot or not all(c in b"0123456789abcdef" for c in slot):
            raise Decline("not a checkpoint's name")
        keep = b"%s/%s/" % (req["keepRefs"].encode(), slot)
        parts, out = git_beside([b"for-each-ref", b"--format=%(objectname)", keep], lambda: batch.ask([
            b"info %s/%s^{commit}" % (req["checkpointRefs"].encode(), slot), b"info %s:w" % k, b"info %s:h" % k,
            b"info %s:r" % k, b"contents %s:i" % k, b"contents %s" % k,
            b"contents %s^{commit}" % req["baseRef"].encode()]))
        (ref_k, ref_type, _), (w, w_type, _), (h, h_type, _), (r, r_type, _), (i, i_type, i_body), \
            (_, _, k_body), (base, base_type, base_raw) = parts
        if ref_type != b"commit" or ref_k != k or w_type != b"tree" or h_type != b"blob" or r_type != b"blob":
            raise Decline("the checkpoint is not as saved")
        if base_type != b"commit" or batch.ask([b"info %s^{tree}" % base])[0][1] != b"tree":
            raise Decline("the base is not whole")
        fork_k = k
        if i is not None and not req.get("includeIgnored") and i_type == b"blob":
            delta = self.index_delta(i_body, w)
            if delta is not None:
                fork_k = self.fork_commit(k_body, base, w, h, r, delta)
        haves = [line for line in data.split(b"\n") if is_id(line)]
        present = []
        if haves:
            asked = batch.ask([b"info " + x for x in haves] + [b"info %s^{tree}" % x for x in haves])
            present = [sha for sha, _, _ in asked if sha is not None]
        keeps = [line for line in out.split(b"\n") if is_id(line)]
        wanted = b"".join(x + b"\n" for x in [fork_k] + keeps) + b"--not\n" + b"".join(x + b"\n" for x in present)
        head = base64.b64encode(base_raw) + b"\n" + fork_k + b"\n"
        return 0, head + pack_up_to(wanted, req.get("hold"), len(head)), b"exported by the box's program\n"

    # The index as what it changes in tree w (the script's index_delta): one "<mode> <object>\t
    # <path>" NUL-ended record per path it holds otherwise (mode 0: not in the index), as a blob;
    # None when the index is not plain. git lists the changes while this program checks that the
    # index is plain (about 10 ms each at 10,000 entries, one beside the other).
    def index_delta(self, body, w):
        tmp = b"/tmp/.drydock-export-index-" + os.urandom(8).hex().encode()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        checked = []

        def check():
            checked.append(plain_index(body))
            return checked[0]
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            plain, out = git_beside([b"diff-index", b"--cached", b"--no-renames", b"-z", b"--raw", w], check,
                                    index=tmp)
        except Decline:
            # (git may fail on an index that is not plain, a split one: the index then goes whole.)
            if checked == [False]:
                return None
            raise
        finally:
            drop_file(tmp)
        if not plain:
            return None
        fields, records = out.split(b"\0"), []
        for at in range(0, len(fields) - 1, 2):
            words = fields[at][1:].split(b" ")
            if len(words) < 5:
                raise Decline("git diff-index answered oddly")
            mode = b"0" if words[4] == b"D" else words[1]
            records.append(b"%s %s\t%s\0" % (mode, words[3], fields[at + 1]))
        return Objects(ROOT).write(b"blob", b"".join(records)).hex().encode()

    # The checkpoint's commit for forks: w, h, r and the delta d, at the checkpoint's own time, so
    # the same checkpoint gives the same commit whichever box it goes to (commit-tree's bytes).
    def fork_commit(self, k_body, base, w, h, r, d):
        when = None
        for line in k_body.split(b"\n"):
            if line.startswith(b"committer "):
                when = line.rsplit(b"> ", 1)[1]
                break
            if not line:
                break
        if when is None:
            raise Decline("the checkpoint has no time")
        o = Objects(ROOT)
        entries = [(b"d", b"100644", d), (b"h", b"100644", h), (b"r", b"100644", r), (b"w", TREE_MODE, w)]
        tree = o.write(b"tree", b"".join(m + b" " + n + b"\0" + bytes.fromhex(x.decode()) for n, m, x in entries))
        who = b"drydock <drydock@localhost> " + when
        return o.write(b"commit", b"tree %s\nparent %s\nauthor %s\ncommitter %s\n\ndrydock checkpoint\n" % (
            tree.hex().encode(), base, who, who)).hex().encode()
