"""The box end of a stream relay (src/sandbox/stream-relay.ts): a box with network none reaches the
session's LLM gateway and egress proxy on the host through it. It listens on 127.0.0.1:PORT in the
box's own network namespace and carries each connection, as frames on its standard input and
output, over the exec stream drydock already holds; drydock connects each one to the one service
this relay is for. Nothing of the host is mounted into the box, and a frame names no destination:
what the box can reach through the relay is fixed by drydock when it starts it.

A frame is a 9-byte header, kind (1 byte), connection id and payload length (unsigned 32-bit,
big-endian), then the payload (at most MAX_PAYLOAD bytes).
  box to host:  R ready (once, id 0, listening) · O opened · D data · E end of the connection's
                input · C closed (forget the id)
  host to box:  D data · E end of the service's output · C closed
A C for an id not open is ignored (both sides may close at once). End of standard input ends the
program and every connection.

Flow: each connection has a thread reading it; one thread writes every frame to the host, and
data frames waiting for it are bounded, so a reader waits (and its program with it) while the
host is not taking them. The main thread reads the host's frames and writes their data with
sendall, so a program in the box that stops reading holds back the relay's other connections,
never the host's memory (the host pauses while the box's input is full), and it never waits on
the host itself. At most MAX_CONNECTIONS are open; further ones are closed at once.
"""
import collections
import os
import socket
import struct
import sys
import threading
import time

HEADER = struct.Struct(">cII")
MAX_PAYLOAD = 64 * 1024
MAX_CONNECTIONS = 256
# Data frames waiting for the host at most (4 MiB).
IN_FLIGHT = 64
READY, OPENED, DATA, END, CLOSED = b"R", b"O", b"D", b"E", b"C"


class Relay:
    def __init__(self, out):
        self.out = out
        # Guards conns and next_id only: no thread waits on the host while holding it.
        self.lock = threading.Lock()
        # id -> [socket, its input ended, the host's output ended]
        self.conns = {}
        self.next_id = 1
        # Frames for the host, written by one thread: the main thread never waits on the host (it
        # must keep reading the host's frames, or a service that is waiting for the box to read
        # would wait for ever). Data frames queued at once are bounded (IN_FLIGHT); the few
        # control frames are not.
        self.frames = collections.deque()
        self.queued = threading.Condition()
        self.room = threading.BoundedSemaphore(IN_FLIGHT)
        threading.Thread(target=self.write_forever, daemon=True).start()

    def send(self, kind, conn_id, payload=b""):
        data = kind == DATA
        if data:
            self.room.acquire()
        with self.queued:
            self.frames.append((HEADER.pack(kind, conn_id, len(payload)) + payload, data))
            self.queued.notify()

    def write_forever(self):
        broken = False
        while True:
            with self.queued:
                while not self.frames:
                    self.queued.wait()
                frame, data = self.frames.popleft()
                last = not self.frames
            if not broken:
                try:
                    self.out.write(frame)
                    if last:
                        self.out.flush()
                except (OSError, ValueError):
                    # The host went: standard input ends too, and the main thread exits.
                    broken = True
            if data:
                self.room.release()

    def accept_forever(self, server):
        while True:
            try:
                sock, _ = server.accept()
            except OSError:
                # Out of descriptors, or a connection reset before it was taken: try again shortly.
                time.sleep(0.05)
                continue
            with self.lock:
                full = len(self.conns) >= MAX_CONNECTIONS
                conn_id = self.next_id
                if not full:
                    self.next_id += 1
                    self.conns[conn_id] = [sock, False, False]
            if full:
                sock.close()
                continue
            self.send(OPENED, conn_id)
            threading.Thread(target=self.read_forever, args=(conn_id, sock), daemon=True).start()

    def read_forever(self, conn_id, sock):
        while True:
            try:
                chunk = sock.recv(MAX_PAYLOAD)
            except OSError:
                self.close(conn_id, tell=True)
                return
            if not chunk:
                # (A connection the host closed wakes here too: nothing is said of it then.)
                with self.lock:
                    known = conn_id in self.conns
                if known:
                    self.send(END, conn_id)
                    self.ended(conn_id, 1)
                return
            self.send(DATA, conn_id, chunk)

    def ended(self, conn_id, which):
        """One direction is over; once both are, the connection is closed and the host told."""
        with self.lock:
            entry = self.conns.get(conn_id)
            if entry is None:
                return
            entry[which] = True
            done = entry[1] and entry[2]
        if done:
            self.close(conn_id, tell=True)

    def close(self, conn_id, tell):
        with self.lock:
            entry = self.conns.pop(conn_id, None)
        if entry is None:
            return
        # shutdown first: a close alone leaves the socket open while its reader thread is in recv
        # (Linux keeps the file until that call returns), so the program in the box would wait on it.
        try:
            entry[0].shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            entry[0].close()
        except OSError:
            pass
        if tell:
            self.send(CLOSED, conn_id)

    def from_host(self, kind, conn_id, payload):
        with self.lock:
            entry = self.conns.get(conn_id)
        if entry is None:
            return
        sock = entry[0]
        if kind == DATA:
            try:
                sock.sendall(payload)
            except OSError:
                self.close(conn_id, tell=True)
        elif kind == END:
            try:
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            self.ended(conn_id, 2)
        elif kind == CLOSED:
            self.close(conn_id, tell=False)


def read_exactly(stream, n):
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def serve(port, inp, out):
    """Listens, says so, and relays until the host's input ends or breaks the framing."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind(("127.0.0.1", port))
    except OSError as error:
        sys.stderr.write("cannot listen on 127.0.0.1:%d in the box: %s\n" % (port, error.strerror))
        return 3
    server.listen(64)
    relay = Relay(out)
    relay.send(READY, 0)
    threading.Thread(target=relay.accept_forever, args=(server,), daemon=True).start()
    while True:
        header = read_exactly(inp, HEADER.size)
        if header is None:
            return 0
        kind, conn_id, length = HEADER.unpack(header)
        if kind not in (DATA, END, CLOSED) or length > MAX_PAYLOAD:
            sys.stderr.write("the host sent a frame this relay does not know: %r of %d bytes\n" % (kind, length))
            return 2
        payload = read_exactly(inp, length) if length else b""
        if payload is None:
            return 0
        relay.from_host(kind, conn_id, payload)


def relay_main(args):
    """`relay PORT`: bootstrap.py (or `python3 -m drydock_box relay PORT`) calls this."""
    if len(args) != 1 or not args[0].isdigit() or not 0 < int(args[0]) < 65536:
        sys.stderr.write("usage: relay PORT\n")
        sys.stderr.flush()
        os._exit(64)
    code = serve(int(args[0]), sys.stdin.buffer, sys.stdout.buffer)
    sys.stderr.flush()
    # Daemon threads may be blocked in accept or recv: end them with the process.
    os._exit(code)
