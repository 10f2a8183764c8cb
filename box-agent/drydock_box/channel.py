"""The box agent's request loop, at the box end of a `BoxChannel` (src/sandbox/box-channel.ts): it runs
each request's argv as a child of its own (a process group, so a kill takes its children too),
feeds it the request's stdin, caps what it keeps of stdout and stderr, and answers with the exit
code and the output. Requests are served in parallel, one thread each; answers are written whole
under a lock.

Host to box: `{"id":N,"argv":[…],"stdin":BYTES,"cap":BYTES}\\n` then the stdin bytes (with
`"changes":true`, the request brings the diff's index up to date: its child gets
DRYDOCK_CHANGES, what the watch of /workspace says changed since the last such request, once
the watch runs, which `"changes":"start"` starts; see watch.py), or
`{"id":N,"kill":true}\\n` (TERM to the request's process group, KILL half a second later).
Box to host: `{"ready":true}\\n` once, then for each request
`{"id":N,"exit":CODE,"out":BYTES,"err":BYTES,"truncated":BOOL}\\n` then the stdout and stderr
bytes. End of input ends the program and everything it started.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from .fork import Forker
from .gitutil import ROOT
from .tree import TreeWriter
from .watch import Watch


# Not dumpable: other processes of the box user cannot open /proc/<pid>/fd and write answers
# into the channel. Programs it starts are dumpable again once they exec. (bootstrap.py does the
# same before it reads the box agent's sources; this is for one started any other way.)
def not_dumpable():
    try:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass


def drain(stream, cap, into):
    kept, size, over = [], 0, False
    while True:
        chunk = stream.read1(65536)
        if not chunk:
            break
        room = cap - size
        if room > 0:
            kept.append(chunk[:room])
            size += min(room, len(chunk))
        if len(chunk) > room:
            over = True
    into.append((b"".join(kept), over))


def feed(proc, data):
    try:
        proc.stdin.write(data)
    except OSError:
        pass
    try:
        proc.stdin.close()
    except OSError:
        pass


def kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def stop(proc):
    # TERM first: git removes its lock files on it (a git killed outright leaves index.lock
    # behind, and every later git on that index fails); what is still there half a second on is
    # killed.
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except OSError:
        return

    def later():
        time.sleep(0.5)
        kill(proc)
    threading.Thread(target=later, daemon=True).start()


class Channel:
    def __init__(self, inp, out, watch, tree, restore):
        self.inp, self.out = inp, out
        self.watch, self.tree, self.restore = watch, tree, restore
        self.lock = threading.Lock()
        self.procs, self.killed = {}, set()

    def send(self, head, *parts):
        data = json.dumps(head).encode() + b"\n" + b"".join(parts)
        with self.lock:
            self.out.write(data)
            self.out.flush()

    # What a request with changes hands its child: its environment, the files of NUL-ended paths it
    # reads as /dev/fd/N (nothing in /tmp for another program to change; closed here once the child
    # has them), and whether the take asked for a whole update.
    def changes(self, start, tree_reset):
        try:
            found, whole = self.watch.take(start, tree_reset)
        except Exception:
            # A fault in the watch must cost speed, never a wrong index: git looks at everything.
            self.watch.dead = True
            found, whole = None, False
        env, listings = dict(os.environb), []
        if found is None:
            env[b"DRYDOCK_CHANGES"] = b"all"
            return env, listings, whole
        try:
            for key, paths in zip((b"DRYDOCK_CHANGES", b"DRYDOCK_GONE"), found):
                if not paths:
                    env[key] = b"none"
                    continue
                listing = tempfile.TemporaryFile()
                listings.append(listing)
                listing.write(b"\0".join(paths) + b"\0")
                listing.flush()
                env[key] = b"/dev/fd/%d" % listing.fileno()
        except OSError:
            # No room for the listings (the agent filled /tmp): git looks at everything this
            # time, which holds whatever the take promised, and the request is still answered.
            for listing in listings:
                listing.close()
            env = dict(os.environb)
            env[b"DRYDOCK_CHANGES"] = b"all"
            return env, [], True
        return env, listings, whole

    def answer(self, rid, cap, code, o, e):
        self.send({"id": rid, "exit": code, "out": min(len(o), cap), "err": min(len(e), cap),
                   "truncated": len(o) > cap or len(e) > cap}, o[:cap], e[:cap])

    def serve(self, req, data):
        rid, cap = req["id"], req.get("cap", 1 << 26)
        took = req.get("changes") in (True, "start")
        # A checkpoint's save the tree writer can vouch for needs no script (tree.py), nor does a
        # plain restore (restore.py), nor a fork's export and import (fork.py).
        fast = req.get("fast")
        op = fast.get("op") if isinstance(fast, dict) else None
        saving = took and op == "save"
        # A session's start (startDiffWatch in src/workspace/box-workspace.ts, also run when a
        # warm box is prefilled): the request that starts the watch resets its account of the
        # tree, and the tree writer then reads the tree of the diff's index as that request left
        # it, in the background (tree.py, prime); unless the tree writer holds a tree its account
        # still vouches for (a prefilled box's, with the session's copy-in since in the account).
        priming = took and op == "prime" and not self.tree.vouches()
        if priming:
            self.tree.forget()
        if saving:
            try:
                done = self.tree.save(fast)
            except Exception as error:
                done = self.tree.declined("%s: %s" % (type(error).__name__, error))
            if done is not None:
                self.answer(rid, cap, *done)
                return
        elif (took and op == "restore") or (not took and op in ("import", "export")):
            restore = self.restore
            try:
                done = (restore.restore(fast, data) if op == "restore" else
                        restore.import_(fast, data) if op == "import" else restore.export_(fast, data))
            except Exception as error:
                done = restore.declined("%s: %s" % (type(error).__name__, error))
            if done is not None:
                self.answer(rid, cap, *done)
                return
        env, listings, whole = (self.changes(req["changes"] == "start", saving or priming) if took
                                else (None, [], False))
        epoch = self.watch.tree_epoch
        try:
            proc = subprocess.Popen(req["argv"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True, env=env,
                                    pass_fds=[listing.fileno() for listing in listings])
        except OSError as error:
            if took:
                self.watch.done(False, whole)
            msg = str(error).encode()
            self.send({"id": rid, "exit": 127, "out": 0, "err": len(msg), "truncated": False}, msg)
            return
        finally:
            for listing in listings:
                listing.close()
        with self.lock:
            self.procs[rid] = proc
            if rid in self.killed:
                stop(proc)
        errs, outs = [], []
        readers = [threading.Thread(target=drain, args=(proc.stderr, cap, errs)),
                   threading.Thread(target=feed, args=(proc, data))]
        for t in readers:
            t.start()
        drain(proc.stdout, cap, outs)
        for t in readers:
            t.join()
        code = proc.wait()
        if took:
            self.watch.done(code == 0, whole)
        if saving and code == 0 and outs[0][0].startswith(b"saved "):
            # The tree the script wrote is the tree writer's from here on (counted before the
            # answer goes: the next save waits for it).
            commit = outs[0][0][6:46]
            self.tree.expect()
            threading.Thread(target=self.tree.load, args=(commit, epoch), daemon=True).start()
        elif priming and code == 0 and isinstance(fast.get("index"), str) and isinstance(fast.get("baseRef"), str):
            self.tree.expect()
            args = (fast["index"].encode(), fast["baseRef"].encode(), epoch, fast.get("readAll") is True)
            if fast.get("readAll") is True:
                # A warm box's, in the pool: done before the answer, so that the box is idle when
                # a session takes it (its copy-in, shell and first commands share no CPU with it).
                self.tree.prime(*args)
            else:
                threading.Thread(target=self.tree.prime, args=args, daemon=True).start()
        elif took and op == "prime" and code == 0 and isinstance(fast.get("baseRef"), str):
            # The tree was kept (a warm box's): counted from the base its session set.
            self.tree.expect()
            threading.Thread(target=self.tree.rebase_to, args=(fast["baseRef"].encode(), epoch), daemon=True).start()
        with self.lock:
            self.procs.pop(rid, None)
            self.killed.discard(rid)
        if code < 0:
            code = 128 - code
        (o, o_over), (e, e_over) = outs[0], errs[0]
        self.send({"id": rid, "exit": code, "out": len(o), "err": len(e), "truncated": o_over or e_over}, o, e)

    # Reads requests until the end of input, then kills what still runs.
    def run(self):
        self.send({"ready": True})
        inp = self.inp
        while True:
            line = inp.readline()
            if not line:
                break
            req = json.loads(line)
            if req.get("kill"):
                with self.lock:
                    proc = self.procs.get(req["id"])
                    if proc is None:
                        self.killed.add(req["id"])
                    else:
                        stop(proc)
                continue
            size = req.get("stdin", 0)
            data = inp.read(size) if size else b""
            threading.Thread(target=self.serve, args=(req, data), daemon=True).start()
        with self.lock:
            for proc in self.procs.values():
                kill(proc)


def main():
    watch = Watch(ROOT)
    channel = Channel(sys.stdin.buffer, sys.stdout.buffer, watch, TreeWriter(watch), Forker(watch))
    not_dumpable()
    channel.run()
