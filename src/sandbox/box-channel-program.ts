/**
 * The program at the box end of a `BoxChannel`: a small Python server that runs each request's
 * argv as a child of its own (a process group, so a kill takes its children too), feeds it the
 * request's stdin, caps what it keeps of stdout and stderr, and answers with the exit code and the
 * output. Requests are served in parallel, one thread each; answers are written whole under a lock.
 *
 * Host to box: `{"id":N,"argv":[…],"stdin":BYTES,"cap":BYTES}\n` then the stdin bytes (with
 * `"changes":true`, the request brings the diff's index up to date: its child gets
 * DRYDOCK_CHANGES, what the watch of /workspace says changed since the last such request, once
 * the watch runs, which `"changes":"start"` starts; see box-watch-program.ts), or
 * `{"id":N,"kill":true}\n` (TERM to the request's process group, KILL half a second later).
 * Box to host: `{"ready":true}\n` once, then for each request
 * `{"id":N,"exit":CODE,"out":BYTES,"err":BYTES,"truncated":BOOL}\n` then the stdout and stderr
 * bytes. End of input ends the program and everything it started.
 */
import { BOX_FORK_PROGRAM } from "./box-fork-program.js";
import { BOX_GIT_PROGRAM } from "./box-git-program.js";
import { BOX_RESTORE_PROGRAM } from "./box-restore-program.js";
import { BOX_TREE_PROGRAM } from "./box-tree-program.js";
import { BOX_WATCH_PROGRAM } from "./box-watch-program.js";

export const BOX_CHANNEL_PROGRAM = String.raw`
import json, os, signal, subprocess, sys, tempfile, threading, time
${BOX_WATCH_PROGRAM}
WATCH = Watch(b"/workspace")
${BOX_GIT_PROGRAM}${BOX_TREE_PROGRAM}
TREE = TreeWriter(WATCH)
${BOX_RESTORE_PROGRAM}${BOX_FORK_PROGRAM}
RESTORE = Forker(WATCH)
try:
    # Not dumpable: other processes of the box user cannot open /proc/<pid>/fd and write answers
    # into the channel. Programs it starts are dumpable again once they exec.
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
except Exception:
    pass
inp, out = sys.stdin.buffer, sys.stdout.buffer
lock = threading.Lock()
procs, killed = {}, set()

def send(head, *parts):
    data = json.dumps(head).encode() + b"\n" + b"".join(parts)
    with lock:
        out.write(data)
        out.flush()

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

# What a request with changes hands its child: its environment, the files of NUL-ended paths it
# reads as /dev/fd/N (nothing in /tmp for another program to change; closed here once the child
# has them), and whether the take asked for a whole update.
def changes(start, tree_reset):
    try:
        found, whole = WATCH.take(start, tree_reset)
    except Exception:
        # A fault in the watch must cost speed, never a wrong index: git looks at everything.
        WATCH.dead = True
        found, whole = None, False
    env, listings = dict(os.environb), []
    if found is None:
        env[b"DRYDOCK_CHANGES"] = b"all"
        return env, listings, whole
    for key, paths in zip((b"DRYDOCK_CHANGES", b"DRYDOCK_GONE"), found):
        if not paths:
            env[key] = b"none"
            continue
        listing = tempfile.TemporaryFile()
        listing.write(b"\0".join(paths) + b"\0")
        listing.flush()
        listings.append(listing)
        env[key] = b"/dev/fd/%d" % listing.fileno()
    return env, listings, whole

def answer(rid, cap, code, o, e):
    send({"id": rid, "exit": code, "out": min(len(o), cap), "err": min(len(e), cap),
          "truncated": len(o) > cap or len(e) > cap}, o[:cap], e[:cap])

def serve(req, data):
    rid, cap = req["id"], req.get("cap", 1 << 26)
    took = req.get("changes") in (True, "start")
    # A checkpoint's save the tree writer can vouch for needs no script (box-tree-program.ts),
    # nor does a plain restore (box-restore-program.ts), nor a fork's export and import
    # (box-fork-program.ts).
    fast = req.get("fast")
    op = fast.get("op") if isinstance(fast, dict) else None
    saving = took and op == "save"
    if saving:
        try:
            done = TREE.save(fast)
        except Exception as error:
            done = TREE.declined("%s: %s" % (type(error).__name__, error))
        if done is not None:
            answer(rid, cap, *done)
            return
    elif (took and op == "restore") or (not took and op in ("import", "export")):
        try:
            done = (RESTORE.restore(fast, data) if op == "restore" else
                    RESTORE.import_(fast, data) if op == "import" else RESTORE.export_(fast, data))
        except Exception as error:
            done = RESTORE.declined("%s: %s" % (type(error).__name__, error))
        if done is not None:
            answer(rid, cap, *done)
            return
    env, listings, whole = changes(req["changes"] == "start", saving) if took else (None, [], False)
    epoch = WATCH.tree_epoch
    try:
        proc = subprocess.Popen(req["argv"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, env=env,
                                pass_fds=[listing.fileno() for listing in listings])
    except OSError as error:
        if took:
            WATCH.done(False, whole)
        msg = str(error).encode()
        send({"id": rid, "exit": 127, "out": 0, "err": len(msg), "truncated": False}, msg)
        return
    finally:
        for listing in listings:
            listing.close()
    with lock:
        procs[rid] = proc
        if rid in killed:
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
        WATCH.done(code == 0, whole)
    if saving and code == 0 and outs[0][0].startswith(b"saved "):
        # The tree the script wrote is the tree writer's from here on.
        commit = outs[0][0][6:46]
        threading.Thread(target=TREE.load, args=(commit, epoch), daemon=True).start()
    with lock:
        procs.pop(rid, None)
        killed.discard(rid)
    if code < 0:
        code = 128 - code
    (o, o_over), (e, e_over) = outs[0], errs[0]
    send({"id": rid, "exit": code, "out": len(o), "err": len(e), "truncated": o_over or e_over}, o, e)

send({"ready": True})
while True:
    line = inp.readline()
    if not line:
        break
    req = json.loads(line)
    if req.get("kill"):
        with lock:
            proc = procs.get(req["id"])
            if proc is None:
                killed.add(req["id"])
            else:
                stop(proc)
        continue
    size = req.get("stdin", 0)
    data = inp.read(size) if size else b""
    threading.Thread(target=serve, args=(req, data), daemon=True).start()
with lock:
    for proc in procs.values():
        kill(proc)
`;
