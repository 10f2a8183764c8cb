import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A Docker Engine of the test's own: a second dockerd with its own data, state, socket and
 * containerd, in a network namespace of its own (a dockerd without a bridge deletes `docker0`, which
 * belongs to the host's engine) and with no iptables rules, so it can be stopped and restarted
 * without touching the engine other tests use. Needs root, dockerd (scripts/setup.sh installs
 * docker.io) and unshare (util-linux).
 */
export class PrivateEngine implements AsyncDisposable {
  private constructor(readonly dir: string) {}

  /** `unix://…` for DOCKER_HOST. */
  get host(): string {
    return `unix://${join(this.dir, "docker.sock")}`;
  }

  static async start(): Promise<PrivateEngine> {
    if (process.getuid?.() !== 0) {
      throw new Error(
        "the engine restart test starts a private dockerd and needs root; run the tests as root (CI does)",
      );
    }
    try {
      execFileSync("dockerd", ["--version"], { stdio: "ignore" });
    } catch {
      throw new Error(
        "the engine restart test needs dockerd on PATH; run scripts/setup.sh as root to install docker.io",
      );
    }
    // Short: containerd's socket path under it must fit in a unix socket address.
    const engine = new PrivateEngine(mkdtempSync("/tmp/ddk-"));
    writeFileSync(join(engine.dir, "daemon.json"), "{}\n");
    await engine.up();
    return engine;
  }

  /** Starts dockerd (again) and waits until it answers. */
  async up(): Promise<void> {
    const d = this.dir;
    const child = spawn(
      "unshare",
      [
        "--net",
        "dockerd",
        ...["--data-root", join(d, "data"), "--exec-root", join(d, "x"), "--pidfile", join(d, "pid")],
        ...["-H", this.host, "--config-file", join(d, "daemon.json"), "--cgroup-parent", "drydock-private"],
        ...["--bridge", "none", "--iptables=false", "--ip-masq=false", "--userland-proxy=false"],
      ],
      { stdio: ["ignore", "ignore", "ignore"], detached: true },
    );
    child.unref();
    for (let i = 0; i < 120; i++) {
      if (this.answers()) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`the private dockerd in ${d} did not answer within 30 s`);
  }

  /** Stops dockerd as `pkill dockerd` would (SIGTERM) and waits until it has exited. */
  async down(): Promise<void> {
    const pid = this.pid();
    if (pid === undefined) return;
    process.kill(pid, "SIGTERM");
    for (let i = 0; i < 240; i++) {
      try {
        process.kill(pid, 0);
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    process.kill(pid, "SIGKILL");
  }

  answers(): boolean {
    try {
      this.docker(["version", "--format", "{{.Server.Version}}"]);
      return true;
    } catch {
      return false;
    }
  }

  /** Runs the docker CLI against this engine. */
  docker(args: string[], input?: Buffer): string {
    return execFileSync("docker", args, {
      env: { ...process.env, DOCKER_HOST: this.host },
      encoding: "utf8",
      stdio: [input ? "pipe" : "ignore", "pipe", "pipe"],
      ...(input ? { input } : {}),
      maxBuffer: 16 * 1024 * 1024,
    });
  }

  /** Copies an image from the engine the other tests use. */
  loadImage(image: string): void {
    execFileSync(
      "sh",
      ["-c", 'docker save "$1" | DOCKER_HOST="$2" docker load -q >/dev/null', "sh", image, this.host],
      {
        stdio: "inherit",
      },
    );
  }

  private pid(): number | undefined {
    try {
      return Number(readFileSync(join(this.dir, "pid"), "utf8").trim()) || undefined;
    } catch {
      return undefined;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.answers()) {
      const ids = this.docker(["ps", "-aq"]).split("\n").filter(Boolean);
      if (ids.length) this.docker(["rm", "-f", ...ids]);
    }
    await this.down();
    // The daemon unmounts its layers when it stops; anything left would keep rm from working.
    const mounts = readFileSync("/proc/mounts", "utf8")
      .split("\n")
      .map((line) => line.split(" ")[1] ?? "")
      .filter((path) => path.startsWith(this.dir))
      .sort((a, b) => b.length - a.length);
    for (const path of mounts) {
      try {
        execFileSync("umount", ["-l", path], { stdio: "ignore" });
      } catch {
        // Already gone.
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
