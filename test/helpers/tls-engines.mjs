// Plain JavaScript (types in tls-engines.d.mts) so the tests and bench/eval-engines.mjs share it.
import { execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  openSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
/**
 * Docker Engines of the test's own, each reachable only over verified TLS on an address of a
 * private /30: a network namespace per engine joined to the host by a veth pair, a dockerd inside
 * it listening on tcp://10.231.X.2:2376 with certificates the test makes (a CA, a server
 * certificate for that IP, one client certificate for all). No bridge and no iptables rules, so
 * the host's engine and network are left alone. Needs root, `ip`, `openssl` and dockerd.
 */
export class TlsEngines {
  dir;
  clientTlsDir;
  engines = [];
  constructor(
    dir,
    /** The client's TLS folder (ca.pem, cert.pem, key.pem), as --engine-tls-dir takes it. */
    clientTlsDir,
  ) {
    this.dir = dir;
    this.clientTlsDir = clientTlsDir;
  }
  static async start(count) {
    if (process.getuid?.() !== 0) {
      throw new Error(
        "the engines test starts dockerds in network namespaces and needs root; run the tests as root (CI does)",
      );
    }
    for (const [program, arg] of [
      ["dockerd", "--version"],
      ["ip", "-V"],
      ["openssl", "version"],
    ]) {
      try {
        execFileSync(program, [arg], { stdio: "ignore" });
      } catch {
        throw new Error(
          `the engines test needs ${program} on PATH; run scripts/setup.sh as root (docker.io, iproute2, openssl)`,
        );
      }
    }
    // Short: containerd's socket path under it must fit in a unix socket address.
    const dir = mkdtempSync("/tmp/ddt-");
    const set = new TlsEngines(dir, join(dir, "client"));
    try {
      makeCa(dir);
      makeCert(dir, "client", "drydock-test-client", "clientAuth");
      const octets = freeOctets(count);
      for (let i = 0; i < count; i++) {
        const engine = new TlsEngine(set, i, octets[i]);
        set.engines.push(engine);
        engine.plumb();
      }
      await Promise.all(set.engines.map((e) => e.up()));
      return set;
    } catch (error) {
      await set[Symbol.asyncDispose]();
      throw error;
    }
  }
  async [Symbol.asyncDispose]() {
    for (const engine of this.engines) await engine.dispose();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
export class TlsEngine {
  set;
  index;
  octet;
  dir;
  ns;
  hostVeth;
  address;
  constructor(set, index, octet) {
    this.set = set;
    this.index = index;
    this.octet = octet;
    this.dir = join(set.dir, `e${index}`);
    this.ns = `ddt-${process.pid}-${index}`;
    this.hostVeth = `ddt${process.pid % 100_000}h${index}`;
    this.address = `10.231.${octet}.2`;
  }
  /** `tcp://10.231.X.2:2376`, for --engine (with the client's TLS folder). */
  get url() {
    return `tcp://${this.address}:2376`;
  }
  /** The namespace, the veth pair and the server's certificate. */
  plumb() {
    mkdirSync(this.dir, { recursive: true });
    makeCert(this.set.dir, `e${this.index}/tls`, this.address, "serverAuth", this.address);
    writeFileSync(join(this.dir, "daemon.json"), "{}\n");
    const nsVeth = `${this.hostVeth.slice(0, -2)}n${this.index}`;
    ip("netns", "add", this.ns);
    ip("link", "add", this.hostVeth, "type", "veth", "peer", "name", nsVeth);
    ip("link", "set", nsVeth, "netns", this.ns);
    ip("addr", "add", `10.231.${this.octet}.1/30`, "dev", this.hostVeth);
    ip("link", "set", this.hostVeth, "up");
    ip("netns", "exec", this.ns, "ip", "addr", "add", `${this.address}/30`, "dev", nsVeth);
    ip("netns", "exec", this.ns, "ip", "link", "set", nsVeth, "up");
    ip("netns", "exec", this.ns, "ip", "link", "set", "lo", "up");
  }
  async up() {
    const d = this.dir;
    const tls = join(d, "tls");
    const log = openSync(join(d, "dockerd.log"), "a");
    // nsenter, not `ip netns exec`: that one remounts /sys, hiding the cgroup mounts dockerd needs.
    const child = spawn(
      "nsenter",
      [
        ...[`--net=/run/netns/${this.ns}`, "dockerd"],
        ...["--data-root", join(d, "data"), "--exec-root", join(d, "x"), "--pidfile", join(d, "pid")],
        ...["-H", this.url, "--tlsverify", "--tlscacert", join(tls, "ca.pem")],
        ...["--tlscert", join(tls, "cert.pem"), "--tlskey", join(tls, "key.pem")],
        ...["--config-file", join(d, "daemon.json"), "--cgroup-parent", this.cgroupParent],
        ...["--bridge", "none", "--iptables=false", "--ip-masq=false", "--userland-proxy=false"],
      ],
      { stdio: ["ignore", log, log], detached: true },
    );
    child.unref();
    closeSync(log);
    let exited = false;
    child.once("exit", () => (exited = true));
    for (let i = 0; i < 240 && !exited; i++) {
      if (this.answers()) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const tail = readFileSync(join(d, "dockerd.log"), "utf8").slice(-2000);
    throw new Error(`the dockerd at ${this.url} did not answer (within 60 s):\n${tail}`);
  }
  get cgroupParent() {
    return `drydock-tls-${process.pid}-${this.index}`;
  }
  answers() {
    try {
      this.docker(["version", "--format", "{{.Server.Version}}"]);
      return true;
    } catch {
      return false;
    }
  }
  /** The docker CLI against this engine, over TLS with the client certificate. */
  docker(args) {
    return execFileSync("docker", args, {
      env: {
        ...process.env,
        DOCKER_HOST: this.url,
        DOCKER_TLS_VERIFY: "1",
        DOCKER_CERT_PATH: join(this.set.dir, "client"),
      },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 30_000,
    });
  }
  pid() {
    try {
      return Number(readFileSync(join(this.dir, "pid"), "utf8").trim()) || undefined;
    } catch {
      return undefined;
    }
  }
  /** The engine dies as a crash would: dockerd gets SIGKILL; its containerd and boxes are left. */
  kill() {
    const pid = this.pid();
    if (pid !== undefined) process.kill(pid, "SIGKILL");
  }
  /** Every process of this engine (dockerd, containerd, shims, boxes) is killed; then its files, veth and namespace go. */
  async dispose() {
    if (existsSync(`/run/netns/${this.ns}`)) {
      for (const pid of nsPids(this.ns)) killQuietly(pid);
    }
    for (const pid of cgroupPids(this.cgroupParent)) killQuietly(pid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    removeCgroups(this.cgroupParent);
    const mounts = readFileSync("/proc/mounts", "utf8")
      .split("\n")
      .map((line) => line.split(" ")[1] ?? "")
      .filter((path) => path.startsWith(this.dir + "/"))
      .sort((a, b) => b.length - a.length);
    for (const path of mounts) {
      try {
        execFileSync("umount", ["-l", path], { stdio: "ignore" });
      } catch {
        // Already gone.
      }
    }
    try {
      ip("link", "del", this.hostVeth);
    } catch {
      // Never made, or gone with the namespace.
    }
    try {
      ip("netns", "del", this.ns);
    } catch {
      // Never made.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
function ip(...args) {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}
function nsPids(ns) {
  try {
    return execFileSync("ip", ["netns", "pids", ns], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}
function killQuietly(pid) {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
const CGROUP_ROOTS = () => {
  if (existsSync("/sys/fs/cgroup/cgroup.controllers")) return ["/sys/fs/cgroup"];
  try {
    return readdirSync("/sys/fs/cgroup").map((c) => join("/sys/fs/cgroup", c));
  } catch {
    return [];
  }
};
/** Every process under the cgroup parent the engine put its boxes in. */
function cgroupPids(parent) {
  const pids = new Set();
  const walk = (dir) => {
    try {
      for (const line of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n"))
        if (line) pids.add(Number(line));
      for (const entry of readdirSync(dir, { withFileTypes: true }))
        if (entry.isDirectory()) walk(join(dir, entry.name));
    } catch {
      // Not there under this controller.
    }
  };
  for (const root of CGROUP_ROOTS()) walk(join(root, parent));
  return [...pids];
}
function removeCgroups(parent) {
  const remove = (dir) => {
    try {
      for (const entry of readdirSync(dir, { withFileTypes: true }))
        if (entry.isDirectory()) remove(join(dir, entry.name));
      rmSync(dir, { recursive: false, force: true });
    } catch {
      try {
        execFileSync("rmdir", [dir], { stdio: "ignore" });
      } catch {
        // Busy or gone.
      }
    }
  };
  for (const root of CGROUP_ROOTS()) remove(join(root, parent));
}
/** Third octets of 10.231.X.0/30 no interface here uses yet. */
function freeOctets(count) {
  const used = execFileSync("ip", ["-4", "-o", "addr"], { encoding: "utf8" });
  const free = [];
  for (let x = 10 + (process.pid % 200); free.length < count; x = x >= 250 ? 10 : x + 1) {
    if (!used.includes(`10.231.${x}.`)) free.push(x);
  }
  return free;
}
function openssl(dir, args) {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}
function makeCa(dir) {
  openssl(dir, [
    ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
    ...["-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2", "-subj", "/CN=drydock test CA"],
  ]);
}
/** A key and a certificate signed by the CA in `dir/sub`, with the CA beside them as ca.pem. */
function makeCert(dir, sub, cn, usage, ipSan) {
  const out = join(dir, sub);
  mkdirSync(out, { recursive: true });
  openssl(out, [
    ...["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
    ...["-keyout", "key.pem", "-out", "req.csr", "-subj", `/CN=${cn}`],
  ]);
  writeFileSync(
    join(out, "ext.cnf"),
    `extendedKeyUsage=${usage}\n${ipSan ? `subjectAltName=IP:${ipSan}\n` : ""}`,
  );
  openssl(out, [
    ...["x509", "-req", "-in", "req.csr", "-CA", join(dir, "ca.pem"), "-CAkey", join(dir, "ca-key.pem")],
    ...["-CAcreateserial", "-out", "cert.pem", "-days", "2", "-extfile", "ext.cnf"],
  ]);
  writeFileSync(join(out, "ca.pem"), readFileSync(join(dir, "ca.pem")));
}
