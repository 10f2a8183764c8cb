/**
 * Egress to the host itself: a name the operator allowed, resolving to an address of the host
 * (the gateway of a bridge network this test makes, where a server of the test listens on port
 * 443), is refused by the egress proxy, in its IPv4 and its IPv4-mapped IPv6 form, and the server
 * never sees a connection; it is reached only once the operator opens that address with
 * `--egress-allow-private`. drydock runs as `drydock run` in a mount namespace of its own whose
 * /etc/hosts names the address; its network is the host's, and the host's /etc/hosts is untouched.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

/** Sends a CONNECT through the box's proxy and prints all it gets back (a 200 and the banner, or the refusal). */
const PROBE = `import os, socket, sys, urllib.parse
proxy = urllib.parse.urlparse(os.environ["HTTPS_PROXY"])
s = socket.create_connection((proxy.hostname, proxy.port), 30)
s.sendall(("CONNECT %s:443 HTTP/1.1\\r\\nHost: %s:443\\r\\n\\r\\n" % (sys.argv[1], sys.argv[1])).encode())
data = b""
while b"hello from the host" not in data:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.decode("latin1"))
`;

describe("egress to a name that resolves to the host's own address", () => {
  const suffix = randomBytes(4).toString("hex");
  const network = `drydock-test-egress-${suffix}`;
  const plain = `bridge-${suffix}.drydock.test`;
  const mapped = `mapped-${suffix}.drydock.test`;
  let gateway: string;
  let server: Server;
  let connections = 0;
  let dir: string;
  let repo: TempRepo;

  beforeAll(async () => {
    if (process.getuid?.() !== 0) {
      throw new Error(
        "this test binds port 443 on a bridge's gateway and mounts an /etc/hosts of its own with unshare: run the tests as root (CI does)",
      );
    }
    execFileSync("docker", ["network", "create", "--label", "drydock.test=network", network], {
      stdio: "ignore",
    });
    gateway = execFileSync(
      "docker",
      ["network", "inspect", network, "--format", "{{range .IPAM.Config}}{{.Gateway}}{{end}}"],
      { encoding: "utf8" },
    ).trim();
    expect(gateway, `docker network ${network} has no IPv4 gateway`).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    // A host service on port 443 of the bridge's gateway: an address only this test listens on.
    server = createServer((socket) => {
      connections++;
      socket.on("error", () => undefined);
      socket.end("hello from the host\n");
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(443, gateway, resolve);
    });
    dir = mkdtempSync(join(tmpdir(), "drydock-egress-host-"));
    writeFileSync(
      join(dir, "hosts"),
      `127.0.0.1 localhost\n${gateway} ${plain}\n::ffff:${gateway} ${mapped}\n`,
    );
    repo = tempRepo({ "probe.py": PROBE });
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    repo?.[Symbol.dispose]();
    if (dir) rmSync(dir, { recursive: true, force: true });
    execFileSync("docker", ["network", "rm", network], { stdio: "ignore" });
  });

  /** `drydock run` with the test's /etc/hosts; `out` is the box's output (stdout) then drydock's log lines (stderr). */
  function run(...args: string[]): Promise<{ code: number | null; out: string }> {
    const child = spawn(
      "unshare",
      [
        "--mount",
        "--",
        "sh",
        "-c",
        'mount --bind "$0" /etc/hosts && exec "$@"',
        join(dir, "hosts"),
        process.execPath,
        cli,
        "run",
        "--repo",
        repo.path,
        "--image",
        inject("sandboxImage"),
        "--no-env",
        "--no-diff",
        ...args,
      ],
      { env: { ...process.env, DRYDOCK_STATE_DIR: join(dir, "state") }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    return new Promise((resolve) => child.on("close", (code) => resolve({ code, out: stdout + stderr })));
  }

  it("refuses the name, IPv4 and IPv4-mapped, and never dials the host", async () => {
    const ran = await run(
      "--egress",
      `${plain},${mapped}`,
      "--",
      `python3 probe.py ${plain}; python3 probe.py ${mapped}`,
    );
    expect(ran.code, ran.out).toBe(0);
    expect(ran.out).toContain(`HTTP/1.1 502 drydock egress: ${plain}:443 unreachable`);
    expect(ran.out).toContain(
      `${plain} resolves only to addresses a box may not reach: ${gateway} is an address of this host (open it with --egress-allow-private ${gateway})`,
    );
    expect(ran.out).toContain(`HTTP/1.1 502 drydock egress: ${mapped}:443 unreachable`);
    expect(ran.out).toContain(
      `${mapped} resolves only to addresses a box may not reach: ::ffff:${gateway} is an IPv6 form of ${gateway}, which is an address of this host`,
    );
    expect(ran.out).not.toContain("hello from the host");
    expect(connections).toBe(0);
  });

  it("reaches it once the operator opens the address, and logs that at start", async () => {
    const ran = await run(
      "--egress",
      plain,
      "--egress-allow-private",
      gateway,
      "--",
      `python3 probe.py ${plain}`,
    );
    expect(ran.code, ran.out).toBe(0);
    expect(ran.out).toMatch(
      new RegExp(
        `relaxation: allowed names may lead boxes to ${gateway.replaceAll(".", "\\.")}/32 \\(--egress-allow-private`,
      ),
    );
    expect(ran.out).toContain("HTTP/1.1 200 Connection Established\r\n\r\nhello from the host");
    expect(connections).toBe(1);
  });

  it("does not open the host's address to a range around it: only naming the address does", async () => {
    const ran = await run(
      "--egress",
      plain,
      "--egress-allow-private",
      "172.16.0.0/12,192.168.0.0/16,10.0.0.0/8",
      "--",
      `python3 probe.py ${plain}`,
    );
    expect(ran.code, ran.out).toBe(0);
    expect(ran.out).toContain(`${gateway} is an address of this host`);
    expect(connections).toBe(1);
  });

  it("refuses --egress-allow-private without --egress, or with what is not an address, before a box is made", async () => {
    const alone = await run("--egress-allow-private", gateway, "--", "true");
    expect(alone.code).toBe(2);
    expect(alone.out).toContain(
      "--egress-allow-private: opens ranges to the egress proxy, which only --egress starts; add --egress HOSTS or drop it",
    );
    const name = await run("--egress", plain, "--egress-allow-private", plain, "--", "true");
    expect(name.code).toBe(2);
    expect(name.out).toContain(`--egress-allow-private: "${plain}" is not an IP address or a CIDR range`);
    expect(connections).toBe(1);
  });
});
