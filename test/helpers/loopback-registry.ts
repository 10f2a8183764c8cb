/**
 * A container registry on 127.0.0.1 for the tests: Debian's docker-registry (installed by
 * scripts/install-docker-registry.sh) with a config and storage directory of the test's own, open
 * or behind htpasswd. Several may share one storage directory, so an image pushed once to the open
 * one is served by the one with credentials too. The engine allows plain HTTP to 127.0.0.0/8.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.js";

const BINARY = process.env.DRYDOCK_DOCKER_REGISTRY ?? "/usr/bin/docker-registry";

export interface RegistryOptions {
  /** Basic auth: only this user and password may pull or push. */
  htpasswd?: { user: string; password: string };
  /** Serve the blobs of another registry's storage (default: a new one). */
  storage?: string;
}

export class LoopbackRegistry implements AsyncDisposable {
  private constructor(
    /** host:port, as image references name it. */
    readonly address: string,
    readonly storage: string,
    private readonly dir: string,
    private readonly child: ChildProcess,
    private readonly output: () => string,
  ) {}

  static async start(options: RegistryOptions = {}): Promise<LoopbackRegistry> {
    if (!existsSync(BINARY)) {
      throw new Error(
        `the registry test needs ${BINARY}: run \`bash scripts/install-docker-registry.sh\` (apt-get install docker-registry apache2-utils)`,
      );
    }
    const dir = mkdtempSync(join(tmpdir(), "drydock-registry-"));
    const storage = options.storage ?? join(dir, "storage");
    mkdirSync(storage, { recursive: true });
    const port = await freePort();
    let auth = "";
    if (options.htpasswd) {
      const line = execFileSync("htpasswd", ["-Bbn", options.htpasswd.user, options.htpasswd.password], {
        encoding: "utf8",
      });
      writeFileSync(join(dir, "htpasswd"), line.trim() + "\n");
      auth = `auth:\n  htpasswd:\n    realm: drydock-test\n    path: ${join(dir, "htpasswd")}\n`;
    }
    writeFileSync(
      join(dir, "config.yml"),
      `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${storage}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${port}\n${auth}`,
    );
    const child = spawn(BINARY, ["serve", join(dir, "config.yml")], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    child.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    const registry = new LoopbackRegistry(`127.0.0.1:${port}`, storage, dir, child, () => output);
    const until = Date.now() + 20_000;
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${port}/v2/`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200 || status === 401) return registry;
      if (child.exitCode !== null || Date.now() > until) {
        await registry[Symbol.asyncDispose]();
        throw new Error(`the registry did not start on 127.0.0.1:${port}: ${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** What the registry printed last, for a failing test's message. */
  get log(): string {
    return this.output();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once("exit", r));
      this.child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
