import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A unix socket in front of the real engine that can be frozen: while frozen, nothing passes in
 * either direction on any connection, old or new (bytes are held, not lost), as when an engine
 * or the path to it stops answering. Point a drydock child at `host` with DOCKER_HOST.
 */
export class FreezableEngine implements AsyncDisposable {
  private frozen = false;
  private readonly held: Array<() => void> = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly dir: string,
  ) {}

  get host(): string {
    return `unix://${join(this.dir, "engine.sock")}`;
  }

  static async start(): Promise<FreezableEngine> {
    const target = (process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock").replace(/^unix:\/\//, "");
    const dir = mkdtempSync(join(tmpdir(), "drydock-engine-"));
    // Half-open kept: an exec that closes its stdin still gets its output back.
    const server = createServer({ allowHalfOpen: true });
    const engine = new FreezableEngine(server, dir);
    server.on("connection", (client) => {
      const upstream = createConnection({ path: target, allowHalfOpen: true });
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        engine.sockets.add(from);
        from.on("data", (chunk) => engine.pass(() => to.write(chunk)));
        from.on("end", () => engine.pass(() => to.end()));
        from.on("error", () => to.destroy());
        from.on("close", () => {
          engine.sockets.delete(from);
          to.destroy();
        });
      }
    });
    await new Promise<void>((resolve) => server.listen(join(dir, "engine.sock"), resolve));
    return engine;
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    for (const deliver of this.held.splice(0)) deliver();
  }

  private pass(deliver: () => void): void {
    if (this.frozen) this.held.push(deliver);
    else deliver();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
