/**
 * kubeExec against a stand-in API server on loopback: the answers a real one gives only by
 * accident (a status that is not JSON, a socket that ends without one, a refused upgrade), a
 * reader that stops reading, to see stdin held back rather than piled up in memory, and a writer
 * faster than where its stdout goes, to see the socket paused.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable, Writable, type Duplex } from "node:stream";
import { KubeConfig } from "@kubernetes/client-node";
import WebSocket, { WebSocketServer } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeStdinFrame, frame } from "../../../src/engine/kubernetes/kube-channel.js";
import { kubeExec, type PodTarget } from "../../../src/engine/kubernetes/kube-exec.js";
import { BoxGoneError, DrydockError, EngineUnavailableError } from "../../../src/util/errors.js";

const MB = 1024 * 1024;
const SUCCESS = JSON.stringify({ metadata: {}, status: "Success" });

type Handler = (socket: WebSocket, raw: Duplex) => void;

/** The pods the stand-in serves: how each one's exec behaves, and whether a GET finds it running. */
const pods: Record<string, { exec?: Handler; refuse?: number; running?: boolean }> = {
  "status-not-json": {
    exec: (ws) => {
      ws.send(frame(1, "partial"));
      ws.send(frame(3, "<html>502 Bad Gateway</html>"));
      ws.close();
    },
    running: true,
  },
  "no-status-gone": {
    exec: (ws) => {
      ws.send(frame(1, "x"));
      ws.close();
    },
  },
  "no-status-running": { exec: (ws) => ws.close(), running: true },
  forbidden: { refuse: 403 },
  "slow-reader": {
    // Reads nothing until told; then counts stdin up to its close and answers with the count.
    exec: (ws, raw) => {
      raw.pause();
      let received = 0;
      ws.on("message", (data: Buffer) => {
        if (data.equals(closeStdinFrame())) {
          ws.send(frame(1, String(received)));
          ws.send(frame(3, SUCCESS));
          ws.close();
        } else if (data[0] === 0) received += data.length - 1;
      });
      resumeSlowReader = () => raw.resume();
    },
    running: true,
  },
  "fast-writer": {
    // 64 MiB of stdout at once (what the socket does not take waits in this process), then success.
    exec: (ws) => {
      const mib = Buffer.alloc(MB, 9);
      for (let i = 0; i < 64; i++) ws.send(frame(1, mib));
      ws.send(frame(3, SUCCESS));
      ws.close();
    },
    running: true,
  },
};
let resumeSlowReader: () => void = () => undefined;

function podJson(name: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "ns" },
    status: { phase: "Running", containerStatuses: [{ name: "box", state: { running: {} } }] },
  });
}

function standIn(): Server {
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((req, res) => {
    const name = /\/pods\/([^/?]+)$/.exec(req.url ?? "")?.[1] ?? "";
    if (pods[name]?.running) {
      res.writeHead(200, { "content-type": "application/json" }).end(podJson(name));
    } else {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ kind: "Status", status: "Failure", reason: "NotFound", code: 404 }));
    }
  });
  server.on("upgrade", (req: IncomingMessage, raw: Duplex, head: Buffer) => {
    const name = /\/pods\/([^/]+)\/exec/.exec(req.url ?? "")?.[1] ?? "";
    const pod = pods[name];
    if (!pod?.exec) {
      const code = pod?.refuse ?? 404;
      const body = JSON.stringify({
        kind: "Status",
        message: code === 403 ? "forbidden: no exec" : "not found",
      });
      raw.end(
        `HTTP/1.1 ${code} No\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(req, raw, head, (ws) => pod.exec?.(ws, raw));
  });
  return server;
}

function target(server: string, pod: string): PodTarget {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server, skipTLSVerify: true }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return { kc, namespace: "ns", pod, container: "box" };
}

describe("kubeExec against a stand-in API server", () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    server = standIn();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it("fails with an engine error naming the pod and program when the status is not JSON", async () => {
    const error = (await kubeExec(target(url, "status-not-json"), ["make", "test"]).catch(
      (e: unknown) => e,
    )) as Error;
    expect(error).toBeInstanceOf(DrydockError);
    expect((error as DrydockError).code).toBe("engine_error");
    expect(error.message).toMatch(/exec make in pod status-not-json failed: the exec status is not JSON/);
  });

  it("tells a socket that ended without a status: BoxGoneError when the pod is gone, else exit -1", async () => {
    await expect(kubeExec(target(url, "no-status-gone"), ["true"])).rejects.toBeInstanceOf(BoxGoneError);
    const result = await kubeExec(target(url, "no-status-running"), ["true"]);
    expect(result.exitCode).toBe(-1);
  });

  it("tells a refused upgrade from a missing pod, and an API server nobody answers at", async () => {
    const refused = (await kubeExec(target(url, "forbidden"), ["ls"]).catch(
      (e: unknown) => e,
    )) as DrydockError;
    expect(refused.code).toBe("engine_error");
    expect(refused.message).toContain("403: forbidden: no exec");
    await expect(kubeExec(target(url, "missing"), ["ls"])).rejects.toBeInstanceOf(BoxGoneError);
    // A port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(kubeExec(target(`http://127.0.0.1:${port}`, "any"), ["ls"])).rejects.toBeInstanceOf(
      EngineUnavailableError,
    );
  });

  it("reads stdin no faster than the far end takes it, and sends all of it", async () => {
    let pulled = 0;
    const total = 64 * MB;
    const chunk = Buffer.alloc(64 * 1024, 7);
    const source = new Readable({
      read() {
        if (pulled >= total) return void this.push(null);
        pulled += chunk.length;
        this.push(chunk);
      },
    });
    const running = kubeExec(target(url, "slow-reader"), ["cat"], { stdin: source });
    await new Promise((r) => setTimeout(r, 1500));
    // The socket's backlog bound plus what the loopback's buffers hold: far from 64 MB.
    expect(pulled).toBeLessThan(24 * MB);
    resumeSlowReader();
    const result = await running;
    expect(result.exitCode).toBe(0);
    expect(result.stdout.toString()).toBe(String(total));
  });

  it("pauses the socket while where its stdout goes is full, and gives all of it there", async () => {
    let taken = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Takes a chunk only once released: until then the first write fills it.
    const sink = new Writable({
      highWaterMark: MB,
      write(chunk: Buffer, _encoding, done) {
        taken += chunk.length;
        void held.then(() => done());
      },
    });
    const running = kubeExec(target(url, "fast-writer"), ["cat"], { stdout: sink });
    await new Promise((r) => setTimeout(r, 1500));
    // What the sink was given while it took nothing (its first chunk, and what waits in its
    // buffer): its high-water mark and what ws had parsed, far from 64 MiB.
    expect(taken + sink.writableLength).toBeLessThan(8 * MB);
    release();
    const result = await running;
    expect(result.exitCode).toBe(0);
    expect(result.stdout.length).toBe(0);
    expect(taken).toBe(64 * MB);
  });
});
