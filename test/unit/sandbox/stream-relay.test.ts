/**
 * The host's end of the stream relay (stream-relay.ts) with the box's end as a box runs it: the
 * box agent's relay.py started the way a box starts it (loader, bootstrap, modules from memory),
 * here as a local python3 whose standard streams stand for the exec's. The service is a real unix
 * socket server. A second group plays a hostile box: frames written straight to the host's sink.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { boxAgentStart } from "../../../src/sandbox/box-agent.js";
import { FRAME, MAX_PAYLOAD, RelayHost, relayFrame } from "../../../src/sandbox/relay-host.js";

let dir: string;
let service: Server;
let socketPath: string;
let served: Socket[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "drydock-relay-"));
  socketPath = join(dir, "service.sock");
  served = [];
  // An echo service that says which connection it is, then echoes until the client ends.
  let n = 0;
  service = createServer({ allowHalfOpen: true }, (socket) => {
    served.push(socket);
    socket.write(`hello ${++n}\n`);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => service.listen(socketPath, resolve));
});

afterEach(async () => {
  for (const s of served) s.destroy();
  await new Promise<void>((resolve) => service.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The box's relay as a local process, joined to a RelayHost as box.exec joins them. */
async function startRelay(options: { maxConnections?: number } = {}) {
  const port = await freePort();
  const agent = boxAgentStart();
  const child: ChildProcess = spawn("python3", ["-I", "-S", "-c", agent.loader, "relay", String(port)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const toBox = new PassThrough();
  toBox.pipe(child.stdin!);
  const violations: string[] = [];
  const host = new RelayHost({
    toBox,
    connect: () => createConnection({ path: socketPath, allowHalfOpen: true }),
    what: "test relay",
    maxConnections: options.maxConnections,
    onViolation: (why) => violations.push(why),
  });
  child.stdout!.pipe(host.sink);
  toBox.write(agent.input);
  await host.ready;
  return {
    port,
    host,
    violations,
    stop: () => {
      child.kill("SIGKILL");
      host.closeAll();
    },
  };
}

/** Connects to the relay's port in the "box", sends `send`, ends, and reads everything back. */
function roundTrip(port: number, send: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const got: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => got.push(chunk));
    socket.on("end", () => resolve(Buffer.concat(got)));
    socket.on("error", reject);
    socket.end(send);
  });
}

describe("the stream relay, both ends", () => {
  it("carries a connection to the service and back, half-close included", async () => {
    const relay = await startRelay();
    try {
      const reply = await roundTrip(relay.port, Buffer.from("ping"));
      expect(reply.toString()).toBe("hello 1\nping");
      await expect.poll(() => relay.host.open).toBe(0);
    } finally {
      relay.stop();
    }
  });

  it("carries 8 MiB each way intact, and many connections at once apart", async () => {
    const relay = await startRelay();
    try {
      const blob = randomBytes(8 * 1024 * 1024);
      const reply = await roundTrip(relay.port, blob);
      const digest = (b: Buffer) => createHash("sha256").update(b).digest("hex");
      expect(digest(reply.subarray(reply.indexOf(10) + 1))).toBe(digest(blob));

      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) => roundTrip(relay.port, Buffer.from(`conn ${i}`))),
      );
      replies.forEach((r, i) => expect(r.toString()).toMatch(new RegExp(`^hello \\d+\\nconn ${i}$`)));
      expect(new Set(replies.map((r) => r.toString().split("\n")[0])).size).toBe(40);
    } finally {
      relay.stop();
    }
  });

  it("holds connections past its bound back: the box's relay closes them at once", async () => {
    const relay = await startRelay({ maxConnections: 3 });
    try {
      const held = await Promise.all(
        Array.from(
          { length: 3 },
          () =>
            new Promise<Socket>((resolve) => {
              const s = connect(relay.port, "127.0.0.1");
              s.once("data", () => resolve(s));
            }),
        ),
      );
      // The host refuses the fourth with C; the box closes it without a byte.
      const refused = await roundTrip(relay.port, Buffer.from("x"));
      expect(refused.length).toBe(0);
      expect(served).toHaveLength(3);
      for (const s of held) s.destroy();
      await expect.poll(() => relay.host.open).toBe(0);
      expect((await roundTrip(relay.port, Buffer.from("again"))).toString()).toMatch(/again$/);
    } finally {
      relay.stop();
    }
  });
});

/** A host end fed frames by the test, as a hostile box would write them. */
function hostile(maxConnections = 4) {
  const toBox = new PassThrough();
  const fromHost: Buffer[] = [];
  toBox.on("data", (chunk: Buffer) => fromHost.push(chunk));
  const violations: string[] = [];
  let connects = 0;
  const host = new RelayHost({
    toBox,
    connect: () => {
      connects++;
      return createConnection({ path: socketPath, allowHalfOpen: true });
    },
    what: "test relay",
    maxConnections,
    onViolation: (why) => violations.push(why),
  });
  const write = (bytes: Buffer) =>
    new Promise<void>((resolve) => {
      host.sink.write(bytes, () => resolve());
    });
  return { host, write, violations, fromHost, connects: () => connects };
}

describe("the host end against a hostile box", () => {
  it.each([
    ["an unknown kind", relayFrame(0x5a, 1), /a frame of kind 0x5a/],
    ["a second ready", relayFrame(FRAME.ready, 0), /a second ready frame/],
    ["an id opened again", relayFrame(FRAME.opened, 1), /not above the last one/],
    [
      "a payload over the bound (its header alone)",
      Buffer.from([FRAME.data, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]),
      /a frame of 4294967295 bytes/,
    ],
  ])("stops at %s and closes every connection", async (_, bytes, why) => {
    const box = hostile();
    await box.write(relayFrame(FRAME.ready, 0));
    await box.write(relayFrame(FRAME.opened, 1));
    await expect.poll(() => served.length).toBe(1);
    await box.write(bytes);
    expect(box.violations).toHaveLength(1);
    expect(box.violations[0]).toMatch(why);
    expect(box.host.open).toBe(0);
    await expect.poll(() => served[0]?.destroyed || served[0]?.readableEnded).toBe(true);
    // What comes after is dropped, not parsed: no new connection.
    await box.write(relayFrame(FRAME.opened, 9));
    expect(box.connects()).toBe(1);
  });

  it("stops at a frame before the relay said it was ready", async () => {
    const box = hostile();
    await box.write(relayFrame(FRAME.opened, 1));
    expect(box.violations).toEqual(["a frame before the relay said it was ready"]);
    expect(box.connects()).toBe(0);
  });

  it("never connects anywhere but the one service, whatever the frames say", async () => {
    const box = hostile(64);
    await box.write(relayFrame(FRAME.ready, 0));
    // Data that looks like an address, in every frame kind the box may send.
    const path = Buffer.from("/var/run/docker.sock");
    for (let id = 1; id <= 20; id++) {
      await box.write(Buffer.concat([relayFrame(FRAME.opened, id), relayFrame(FRAME.data, id, path)]));
    }
    await expect.poll(() => served.length).toBe(20);
    expect(box.connects()).toBe(20);
    expect(box.violations).toEqual([]);
  });

  it("ignores data, ends and closes for connections that are not open", async () => {
    const box = hostile();
    await box.write(relayFrame(FRAME.ready, 0));
    await box.write(relayFrame(FRAME.data, 77, Buffer.from("nobody")));
    await box.write(relayFrame(FRAME.end, 78));
    await box.write(relayFrame(FRAME.closed, 79));
    expect(box.violations).toEqual([]);
    expect(box.connects()).toBe(0);
  });

  it("delivers what the box sent before it closed a connection to the service", async () => {
    // A service that counts what it gets, slowly at first.
    for (const s of served) s.destroy();
    await new Promise<void>((resolve) => service.close(() => resolve()));
    let got = 0;
    service = createServer((socket) => {
      served.push(socket);
      socket.pause();
      setTimeout(() => socket.resume(), 300);
      socket.on("data", (chunk: Buffer) => (got += chunk.length));
    });
    await new Promise<void>((resolve) => service.listen(socketPath, resolve));
    const box = hostile();
    await box.write(relayFrame(FRAME.ready, 0));
    await box.write(relayFrame(FRAME.opened, 1));
    const frames: Buffer[] = [];
    for (let i = 0; i < 32; i++) frames.push(relayFrame(FRAME.data, 1, Buffer.alloc(MAX_PAYLOAD, 0x62)));
    frames.push(relayFrame(FRAME.closed, 1));
    // All in one write, as a box's last words and its close arrive together.
    void box.write(Buffer.concat(frames));
    await expect.poll(() => got, { timeout: 10_000 }).toBe(32 * MAX_PAYLOAD);
    expect(box.host.open).toBe(0);
  });

  it("answers an open past the bound with a close and does not connect it", async () => {
    const box = hostile(2);
    await box.write(relayFrame(FRAME.ready, 0));
    for (let id = 1; id <= 5; id++) await box.write(relayFrame(FRAME.opened, id));
    expect(box.connects()).toBe(2);
    const closes = Buffer.concat(box.fromHost);
    const closed: number[] = [];
    for (let at = 0; at + 9 <= closes.length; at += 9 + closes.readUInt32BE(at + 5)) {
      if (closes[at] === FRAME.closed) closed.push(closes.readUInt32BE(at + 1));
    }
    expect(closed).toEqual([3, 4, 5]);
  });

  it("does not take in more from the box while the service is not reading", async () => {
    // A service that never reads: the box's data fills the socket and the host stops accepting it
    // (the exec's stream is then paused), instead of holding it all in memory.
    for (const s of served) s.destroy();
    await new Promise<void>((resolve) => service.close(() => resolve()));
    service = createServer((socket) => {
      served.push(socket);
      socket.pause();
    });
    await new Promise<void>((resolve) => service.listen(socketPath, resolve));
    const box = hostile();
    await box.write(relayFrame(FRAME.ready, 0));
    await box.write(relayFrame(FRAME.opened, 1));
    const chunk = relayFrame(FRAME.data, 1, Buffer.alloc(MAX_PAYLOAD, 0x61));
    let accepted = 0;
    for (let i = 0; i < 1024; i++) {
      const done = await Promise.race([
        box.write(chunk).then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 300)),
      ]);
      if (!done) break;
      accepted += MAX_PAYLOAD;
    }
    // 64 MiB were offered; the kernel's socket buffers and the stream's take a few MiB at most.
    expect(accepted).toBeGreaterThan(0);
    expect(accepted).toBeLessThan(16 * 1024 * 1024);
  });
});
