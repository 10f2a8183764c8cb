import { mkdtempSync, rmSync } from "node:fs";
import { createServer, connect, isIP, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseEgressFlag } from "../../../src/gateway/egress-allowlist.js";
import { parseAddressRanges } from "../../../src/gateway/egress-address-policy.js";
import { dialPolicy, hostDial } from "../../../src/gateway/egress-dial.js";
import { runningInterfaceAddresses } from "../../../src/gateway/host-addresses.js";
import { EgressProxy } from "../../../src/gateway/egress-proxy.js";
import { addLogSink, type LogRecord } from "../../../src/util/log.js";

/** Sends raw bytes to the proxy's socket and collects everything it answers until it closes. */
function exchange(
  socketPath: string,
  request: string,
  afterOpen?: (socket: Socket) => void,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      if (afterOpen && text.startsWith("HTTP/1.1 200")) {
        const hook = afterOpen;
        afterOpen = undefined;
        hook(socket);
      }
    });
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
    socket.write(request);
  });
}

describe("EgressProxy", () => {
  let dir: string;
  let echo: Server;
  let echoPort: number;
  let proxy: EgressProxy | undefined;
  const dialled: string[] = [];
  const logs: LogRecord[] = [];
  let removeSink: () => void;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "drydock-egress-"));
    // The "remote host": an echo server that upper-cases what it gets and closes after "BYE".
    echo = createServer((socket) => {
      socket.on("data", (chunk) => {
        const text = chunk.toString();
        socket.write(text.toUpperCase());
        if (text.includes("bye")) socket.end();
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    echoPort = (echo.address() as { port: number }).port;
    removeSink = addLogSink((record) => logs.push(record));
  });

  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    dialled.length = 0;
    logs.length = 0;
  });

  afterAll(async () => {
    removeSink();
    await new Promise((resolve) => echo.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (allow: string) => {
    proxy = await EgressProxy.start({
      socketPath: join(dir, "egress.sock"),
      allowlist: parseEgressFlag(allow),
      label: "s-test",
      // Every allowed target leads to the local echo server; the spy records what was dialled.
      dial: (host, port) => {
        dialled.push(`${host}:${port}`);
        return new Promise((resolve, reject) => {
          const socket = connect(echoPort, "127.0.0.1", () => resolve(socket));
          socket.once("error", reject);
        });
      },
    });
    return proxy;
  };

  it("tunnels to an allowed host, with bytes counted each way and logged", async () => {
    const p = await start("pypi");
    const text = await exchange(
      p.socketPath,
      "CONNECT PyPI.org.:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n",
      (s) => s.write("hello bye"),
    );
    expect(text).toBe("HTTP/1.1 200 Connection Established\r\n\r\nHELLO BYE");
    expect(dialled).toEqual(["pypi.org:443"]);
    await expect.poll(() => p.report().connections.allowed).toBe(1);
    expect(p.report()).toMatchObject({
      allowlist: ["pypi.org", "files.pythonhosted.org"],
      connections: { allowed: 1, refused: 0, failed: 0 },
      bytes_up: 9,
      bytes_down: 9,
      hosts: [{ host: "pypi.org", port: 443, allowed: 1, bytes_up: 9, bytes_down: 9 }],
    });
    expect(logs.map((r) => r.message)).toContain(
      "session s-test: egress allowed pypi.org:443, 9 bytes up, 9 bytes down",
    );
  });

  it("refuses a host not listed before dialling, naming the host and the flag", async () => {
    const p = await start("pypi");
    const text = await exchange(
      p.socketPath,
      "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
    );
    const [head, body] = text.split("\r\n\r\n");
    expect(head).toMatch(
      /^HTTP\/1\.1 403 drydock egress refused example\.com:443 \(allow it with drydock serve --egress example\.com\)\r\n/,
    );
    expect(body).toContain(
      "example.com is not in this session's egress allowlist (pypi.org, files.pythonhosted.org)",
    );
    expect(body).toContain("drydock serve --egress example.com");
    expect(dialled).toEqual([]);
    expect(p.report()).toMatchObject({
      connections: { allowed: 0, refused: 1, failed: 0 },
      hosts: [{ host: "example.com", port: 443, refused: 1, allowed: 0 }],
    });
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: "warning",
        message:
          "session s-test: egress refused example.com:443: example.com is not in this session's egress allowlist",
      }),
    );
  });

  it("refuses other ports, IP literals not listed and garbage targets without dialling", async () => {
    const p = await start("pypi,*.example.com");
    expect(await exchange(p.socketPath, "CONNECT pypi.org:22 HTTP/1.1\r\n\r\n")).toMatch(
      /^HTTP\/1\.1 403 drydock egress refused pypi\.org:22 \(only port 443 is allowed\)/,
    );
    expect(await exchange(p.socketPath, "CONNECT 2130706433:443 HTTP/1.1\r\n\r\n")).toMatch(
      /^HTTP\/1\.1 403 drydock egress refused 127\.0\.0\.1:443/,
    );
    expect(await exchange(p.socketPath, "CONNECT [::1]:443 HTTP/1.1\r\n\r\n")).toMatch(
      /^HTTP\/1\.1 403 drydock egress refused \[::1\]:443 .*--egress \[::1\]\)/,
    );
    expect(await exchange(p.socketPath, "CONNECT example.com:443 HTTP/1.1\r\n\r\n")).toMatch(
      /^HTTP\/1\.1 403/,
    );
    expect(await exchange(p.socketPath, "CONNECT a@b:443 HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 /);
    expect(dialled).toEqual([]);
    expect(p.report().connections).toEqual({ allowed: 0, refused: 5, failed: 0 });
  });

  it("refuses plain http, even to an allowed host", async () => {
    const p = await start("pypi");
    const text = await exchange(
      p.socketPath,
      "GET http://pypi.org/simple/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
    );
    expect(text).toMatch(/^HTTP\/1\.1 403 drydock egress: plain http is refused, use https\r\n/);
    expect(text).toContain("boxes reach hosts over HTTPS only");
    expect(dialled).toEqual([]);
    expect(p.report().hosts).toEqual([
      { host: "pypi.org", port: 80, allowed: 0, refused: 1, failed: 0, bytes_up: 0, bytes_down: 0 },
    ]);
  });

  it("answers 502 and counts a failure when an allowed host cannot be reached", async () => {
    proxy = await EgressProxy.start({
      socketPath: join(dir, "egress.sock"),
      allowlist: ["pypi.org"],
      label: "s-test",
      dial: () => Promise.reject(new Error("pypi.org does not resolve on the host (ENOTFOUND)")),
    });
    const text = await exchange(proxy.socketPath, "CONNECT pypi.org:443 HTTP/1.1\r\n\r\n");
    expect(text).toMatch(/^HTTP\/1\.1 502 drydock egress: pypi\.org:443 unreachable/);
    expect(text).toContain("ENOTFOUND");
    expect(proxy.report().connections).toEqual({ allowed: 0, refused: 0, failed: 1 });
  });

  it("cuts open tunnels when it closes", async () => {
    const p = await start("pypi");
    const done = exchange(p.socketPath, "CONNECT pypi.org:443 HTTP/1.1\r\n\r\n", (s) => s.write("hi"));
    await expect.poll(() => dialled.length).toBe(1);
    await p.close();
    await expect(done).resolves.toMatch(/^HTTP\/1\.1 200/);
  });
});

describe("hostDial", () => {
  const signal = () => new AbortController().signal;

  it("never leads a name to loopback: every address it resolves to is checked", async () => {
    await expect(hostDial()("localhost", 443, signal())).rejects.toThrow(
      /^localhost resolves only to addresses a box may not reach: (127\.0\.0\.1|::1) is loopback/,
    );
  });

  it("checks a listed IP literal too: the host's interfaces and private ranges are refused unless opened", async () => {
    const own = runningInterfaceAddresses().find((a) => isIP(a) === 4 && !a.startsWith("127."));
    expect(own, "the host has no IPv4 address but loopback").toBeDefined();
    await expect(hostDial()(own!, 443, signal())).rejects.toThrow(
      `${own} is an address of this host (open it with --egress-allow-private ${own}); a box may not reach it`,
    );
    await expect(
      hostDial({ engineGateways: async () => ["198.51.100.7"] })("198.51.100.7", 443, signal()),
    ).rejects.toThrow(/^198\.51\.100\.7 is an address of this host/);
    await expect(hostDial()("::ffff:10.0.0.5", 443, signal())).rejects.toThrow(
      /^::ffff:10\.0\.0\.5 is an IPv6 form of 10\.0\.0\.5, which is private \(RFC 1918\)/,
    );
  });

  it("reads the engine's network gateways at each dial: a network made after the proxy started is the host's", async () => {
    const gateways: string[] = [];
    const options = { engineGateways: async () => gateways };
    expect((await dialPolicy(options)).hostAddresses).not.toContain("172.28.99.1");
    gateways.push("172.28.99.1");
    expect((await dialPolicy(options)).hostAddresses).toContain("172.28.99.1");
    const dial = hostDial({
      ...options,
      allowPrivate: parseAddressRanges(["172.16.0.0/12"], "--egress-allow-private"),
    });
    await expect(dial("172.28.99.1", 9, signal())).rejects.toThrow(
      /^172\.28\.99\.1 is an address of this host/,
    );
  });

  it("refuses every dial when the engine's networks cannot be read", async () => {
    const dial = hostDial({
      engineGateways: async () => {
        throw new Error("the engine does not answer");
      },
    });
    await expect(dial("198.51.100.9", 443, signal())).rejects.toThrow("the engine does not answer");
  });

  it("connects to an address the operator opened, and to the one it checked", async () => {
    const server = createServer((socket) => {
      socket.on("error", () => undefined);
      socket.end("hello");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const dial = hostDial({ allowPrivate: parseAddressRanges(["127.0.0.1"], "--egress-allow-private") });
      const socket = await dial("localhost", port, signal());
      expect(socket.remoteAddress).toBe("127.0.0.1");
      socket.destroy();
      await expect(
        hostDial({ allowPrivate: parseAddressRanges(["127.0.0.0/8"], "--egress-allow-private") })(
          "127.0.0.1",
          port,
          signal(),
        ),
      ).rejects.toThrow(/loopback \(open it with --egress-allow-private 127\.0\.0\.1\)/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
