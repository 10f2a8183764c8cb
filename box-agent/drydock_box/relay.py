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

One thread, one poll loop, no thread or process per connection: a box at its process limit (a
fork bomb, or a flood of connections) cannot stop the relay from taking or closing connections.
Every descriptor is non-blocking. Flow is bounded both ways: connections are not read while more
than HOST_BUFFER bytes wait for the host, and the host's frames are not read while a connection
holds more than CONN_BUFFER bytes its program has not taken (so a program in the box that stops
reading holds back the relay's other connections, never anyone's memory; the host pauses while
the box's input is full). At most MAX_CONNECTIONS are open; further ones are closed at once.

The frames start after bootstrap.py's two lines; the host writes nothing more before the R frame,
so nothing is left in the buffered standard input that the loop (reading the descriptor) would
miss.
"""
import os
import select
import socket
import struct
import sys

HEADER = struct.Struct(">cII")
MAX_PAYLOAD = 64 * 1024
MAX_CONNECTIONS = 256
HOST_BUFFER = 4 * 1024 * 1024
CONN_BUFFER = 1024 * 1024
READY, OPENED, DATA, END, CLOSED = b"R", b"O", b"D", b"E", b"C"
IN, OUT, GONE = select.POLLIN, select.POLLOUT, select.POLLHUP | select.POLLERR


class Conn:
    def __init__(self, conn_id, sock):
        self.id = conn_id
        self.sock = sock
        self.out = bytearray()
        # Its program's input ended; the host's output for it ended; its write side was shut.
        self.read_done = False
        self.host_done = False
        self.shut = False
        # The host closed it: it is closed here once what the host sent is written, untold.
        self.host_closed = False


class Relay:
    def __init__(self, server, in_fd, out_fd):
        self.server = server
        self.in_fd = in_fd
        self.out_fd = out_fd
        self.conns = {}
        self.by_fd = {}
        self.next_id = 1
        self.to_host = bytearray()
        self.from_host = bytearray()

    def queue(self, kind, conn_id, payload=b""):
        self.to_host += HEADER.pack(kind, conn_id, len(payload)) + payload

    def run(self):
        """Relays until the host's input ends (0) or breaks the framing (2)."""
        while True:
            poll = select.poll()
            poll.register(self.server, IN)
            if self.to_host:
                poll.register(self.out_fd, OUT)
            if all(len(c.out) <= CONN_BUFFER for c in self.conns.values()):
                poll.register(self.in_fd, IN)
            room = len(self.to_host) < HOST_BUFFER
            for conn in self.conns.values():
                events = (IN if room and not conn.read_done else 0) | (OUT if conn.out else 0)
                if events:
                    poll.register(conn.sock, events)
            for fd, events in poll.poll():
                if fd == self.server.fileno():
                    self.accept()
                elif fd == self.out_fd:
                    if not self.write_host():
                        return 0
                elif fd == self.in_fd:
                    code = self.read_host()
                    if code is not None:
                        return code
                else:
                    conn = self.by_fd.get(fd)
                    if conn is not None:
                        self.serve_conn(conn, events)

    def accept(self):
        while True:
            try:
                sock, _ = self.server.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                # Out of descriptors, or a connection reset before it was taken.
                return
            if len(self.conns) >= MAX_CONNECTIONS:
                sock.close()
                continue
            sock.setblocking(False)
            conn = Conn(self.next_id, sock)
            self.next_id += 1
            self.conns[conn.id] = conn
            self.by_fd[sock.fileno()] = conn
            self.queue(OPENED, conn.id)

    def write_host(self):
        try:
            written = os.write(self.out_fd, self.to_host[:HOST_BUFFER])
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        del self.to_host[:written]
        return True

    def read_host(self):
        try:
            data = os.read(self.in_fd, 4 * MAX_PAYLOAD)
        except (BlockingIOError, InterruptedError):
            return None
        if not data:
            return 0
        self.from_host += data
        while len(self.from_host) >= HEADER.size:
            kind, conn_id, length = HEADER.unpack_from(self.from_host)
            if kind not in (DATA, END, CLOSED) or length > MAX_PAYLOAD:
                sys.stderr.write("the host sent a frame this relay does not know: %r of %d bytes\n" % (kind, length))
                return 2
            if len(self.from_host) < HEADER.size + length:
                break
            payload = bytes(self.from_host[HEADER.size:HEADER.size + length])
            del self.from_host[:HEADER.size + length]
            conn = self.conns.get(conn_id)
            if conn is None:
                continue
            if kind == DATA:
                conn.out += payload
            elif kind == END:
                conn.host_done = True
                self.flush_conn(conn)
            elif conn.out:
                # Gone on the host: what it sent before still reaches the program, then the
                # connection closes (nothing more is read from it or said of it).
                conn.host_done = conn.read_done = conn.host_closed = True
                self.flush_conn(conn)
            else:
                self.close(conn, tell=False)
        return None

    def serve_conn(self, conn, events):
        if events & (IN | GONE) and not conn.read_done:
            try:
                chunk = conn.sock.recv(MAX_PAYLOAD)
            except (BlockingIOError, InterruptedError):
                chunk = None
            except OSError:
                self.close(conn, tell=True)
                return
            if chunk:
                self.queue(DATA, conn.id, chunk)
            elif chunk is not None:
                conn.read_done = True
                self.queue(END, conn.id)
                self.finish(conn)
        if conn.id in self.conns and (events & OUT or (events & GONE and conn.out)):
            self.flush_conn(conn)

    def flush_conn(self, conn):
        if conn.out:
            try:
                sent = conn.sock.send(conn.out)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.close(conn, tell=True)
                return
            del conn.out[:sent]
        if not conn.out and conn.host_done and not conn.shut:
            conn.shut = True
            try:
                conn.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        self.finish(conn)

    def finish(self, conn):
        """Once both ways are over and everything is written, the connection is closed."""
        if conn.read_done and conn.shut:
            self.close(conn, tell=not conn.host_closed)

    def close(self, conn, tell):
        if self.conns.pop(conn.id, None) is None:
            return
        self.by_fd.pop(conn.sock.fileno(), None)
        try:
            conn.sock.close()
        except OSError:
            pass
        if tell:
            self.queue(CLOSED, conn.id)


def serve(port, in_fd, out_fd):
    """Listens, says so, and relays until the host's input ends or breaks the framing."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind(("127.0.0.1", port))
    except OSError as error:
        sys.stderr.write("cannot listen on 127.0.0.1:%d in the box: %s\n" % (port, error.strerror))
        return 3
    server.listen(128)
    server.setblocking(False)
    os.set_blocking(in_fd, False)
    os.set_blocking(out_fd, False)
    relay = Relay(server, in_fd, out_fd)
    relay.queue(READY, 0)
    return relay.run()


def relay_main(args):
    """`relay PORT`: bootstrap.py (or `python3 -m drydock_box relay PORT`) calls this."""
    if len(args) != 1 or not args[0].isdigit() or not 0 < int(args[0]) < 65536:
        sys.stderr.write("usage: relay PORT\n")
        sys.stderr.flush()
        os._exit(64)
    sys.stdout.flush()
    code = serve(int(args[0]), sys.stdin.fileno(), sys.stdout.fileno())
    sys.stderr.flush()
    os._exit(code)
