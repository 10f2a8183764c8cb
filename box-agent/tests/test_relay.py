"""The stream relay (relay.py) started as the host starts it in a box (loader, bootstrap, modules
from memory, `relay PORT`), spoken to as the host speaks to it: frames on its standard input and
output. The host's side is src/sandbox/stream-relay.ts (its own tests run both sides together)."""
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest
from conftest import LOADER, agent_input, pythons

HEADER = struct.Struct(">cII")
PYTHONS = pythons()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Relay:
    def __init__(self, port, python=None):
        self.port = port
        self.proc = subprocess.Popen([python or sys.executable, "-I", "-S", "-c", LOADER, "relay", str(port)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.proc.stdin.write(agent_input())
        self.proc.stdin.flush()
        self.buf = b""

    def frame(self, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buf) >= HEADER.size:
                kind, conn_id, length = HEADER.unpack(self.buf[:HEADER.size])
                if len(self.buf) >= HEADER.size + length:
                    payload = self.buf[HEADER.size:HEADER.size + length]
                    self.buf = self.buf[HEADER.size + length:]
                    return kind, conn_id, payload
            left = deadline - time.monotonic()
            assert left > 0, "no frame from the relay in time"
            if select.select([self.proc.stdout.fileno()], [], [], left)[0]:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, "the relay ended: %r" % self.proc.stderr.read()
                self.buf += chunk

    def send(self, kind, conn_id, payload=b""):
        self.proc.stdin.write(HEADER.pack(kind, conn_id, len(payload)) + payload)
        self.proc.stdin.flush()

    def connect(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        kind, conn_id, _ = self.frame()
        assert kind == b"O"
        return sock, conn_id

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()


@pytest.fixture
def relay():
    r = Relay(free_port())
    assert r.frame() == (b"R", 0, b"")
    yield r
    r.stop()


def recv_all(sock):
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


@pytest.mark.parametrize("python", sorted(PYTHONS))
def test_a_connection_is_carried_both_ways_and_closed_when_both_ends_end(python):
    r = Relay(free_port(), PYTHONS[python])
    try:
        assert r.frame() == (b"R", 0, b"")
        sock, conn_id = r.connect()
        sock.sendall(b"GET / HTTP/1.1\r\n\r\n")
        got = b""
        while got != b"GET / HTTP/1.1\r\n\r\n":
            kind, cid, payload = r.frame()
            assert (kind, cid) == (b"D", conn_id)
            got += payload
        r.send(b"D", conn_id, b"HTTP/1.1 200 OK\r\n\r\nhello")
        r.send(b"E", conn_id)
        assert recv_all(sock) == b"HTTP/1.1 200 OK\r\n\r\nhello"
        sock.shutdown(socket.SHUT_WR)
        assert r.frame() == (b"E", conn_id, b"")
        assert r.frame() == (b"C", conn_id, b"")
        sock.close()
    finally:
        r.stop()


def test_large_data_arrives_in_frames_no_larger_than_the_bound(relay):
    sock, conn_id = relay.connect()
    blob = os.urandom(1024 * 1024)
    sock.sendall(blob)
    sock.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        kind, cid, payload = relay.frame()
        assert cid == conn_id
        assert len(payload) <= 64 * 1024
        if kind == b"E":
            break
        got += payload
    assert got == blob
    sock.close()


def test_connections_are_apart_and_ids_are_not_reused(relay):
    a, ida = relay.connect()
    b, idb = relay.connect()
    assert ida != idb
    relay.send(b"D", idb, b"to b")
    relay.send(b"C", idb)
    assert recv_all(b) == b"to b"
    a.close()
    assert relay.frame() == (b"E", ida, b"")
    relay.send(b"E", ida)
    assert relay.frame() == (b"C", ida, b"")
    c, idc = relay.connect()
    assert idc not in (ida, idb)
    c.close()


def test_frames_for_ids_not_open_are_ignored(relay):
    relay.send(b"D", 999, b"nobody")
    relay.send(b"C", 12345)
    relay.send(b"E", 0)
    sock, conn_id = relay.connect()
    relay.send(b"D", conn_id, b"still here")
    relay.send(b"E", conn_id)
    assert recv_all(sock) == b"still here"
    sock.close()


def test_what_the_host_sent_before_closing_reaches_the_program_first(relay):
    # More than the socket takes at once, then the host's close in the same breath: the program,
    # reading only afterwards, still gets every byte, then the end.
    sock, conn_id = relay.connect()
    blob = os.urandom(4 * 1024 * 1024)

    def host():
        # (A thread: the relay stops reading the host while the program holds back, as it must.)
        for at in range(0, len(blob), 64 * 1024):
            relay.send(b"D", conn_id, blob[at:at + 64 * 1024])
        relay.send(b"E", conn_id)
        relay.send(b"C", conn_id)
    sender = threading.Thread(target=host, daemon=True)
    sender.start()
    time.sleep(0.5)
    sock.settimeout(10)
    assert recv_all(sock) == blob
    sender.join(10)
    sock.close()


def test_the_host_closing_a_connection_closes_it_in_the_box(relay):
    sock, conn_id = relay.connect()
    relay.send(b"C", conn_id)
    assert recv_all(sock) == b""
    sock.close()


def test_connections_past_the_bound_are_closed_at_once(relay):
    held = [relay.connect()[0] for _ in range(256)]
    extra = socket.create_connection(("127.0.0.1", relay.port), timeout=10)
    extra.settimeout(10)
    assert extra.recv(1) == b""
    # No frame was sent for it: the next frame is the first held connection's end.
    held[0].close()
    assert relay.frame()[0] == b"E"
    for sock in held[1:] + [extra]:
        sock.close()


@pytest.mark.parametrize("frame", [HEADER.pack(b"O", 1, 0), HEADER.pack(b"R", 0, 0), b"\xff" * 9,
                                   HEADER.pack(b"D", 1, 64 * 1024 + 1)])
def test_a_frame_the_relay_does_not_know_ends_it(relay, frame):
    relay.proc.stdin.write(frame)
    relay.proc.stdin.flush()
    assert relay.proc.wait(10) == 2
    assert b"does not know" in relay.proc.stderr.read()


def test_the_end_of_its_input_ends_it_and_every_connection(relay):
    sock, _ = relay.connect()
    relay.proc.stdin.close()
    assert relay.proc.wait(10) == 0
    sock.settimeout(10)
    assert recv_all(sock) == b""
    sock.close()


def test_a_port_already_taken_is_said_and_ends_it():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    r = Relay(taken.getsockname()[1])
    try:
        assert r.proc.wait(10) == 3
        assert b"cannot listen on 127.0.0.1:" in r.proc.stderr.read()
        assert r.proc.stdout.read() == b""
    finally:
        r.stop()
        taken.close()


@pytest.mark.parametrize("args", [[], ["x"], ["0"], ["70000"], ["1", "2"]])
def test_a_bad_port_is_refused(args):
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", LOADER, "relay"] + args, input=agent_input(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
    assert proc.returncode == 64
    assert b"usage: relay PORT" in proc.stderr
