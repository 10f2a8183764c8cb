/**
 * Where an HTTP server writes its credentials in the state directory. The first server of a state
 * directory writes `http-token` and `live-key`, the names the docs give; while it runs, another
 * server on the same directory writes `http-token.PORT` and `live-key.PORT` of its own instead, so
 * neither rewrites the other's (whose printed commands would then get 401), and each prints where
 * its own are. A claim file names the process holding the plain names; a claim whose process is
 * gone (killed, or on a machine that rebooted) is taken over.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { currentOwner, formatOwner, ownerIsDead, parseOwner } from "../engine/labels.js";
import { logger } from "../util/log.js";

const log = logger("http");
const CLAIM = "http-server.owner";

/** Writes a secret for the person at the host only (mode 0600, in `dir`). */
function writeSecret(dir: string, name: string, secret: string): string {
  const file = join(dir, name);
  writeFileSync(file, secret + "\n", { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

export class CredentialFiles {
  private readonly written: string[] = [];

  private constructor(
    private readonly dir: string,
    /** "" for the plain names, ".PORT" for this server's own. */
    private readonly suffix: string,
    private readonly claim: string | undefined,
  ) {}

  /** Claims the plain names for this server when no live server of `dir` holds them. */
  static claim(dir: string, port: number): CredentialFiles {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, CLAIM);
    const mine = `${formatOwner(currentOwner())}\n${port}\n`;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(path, mine, { flag: "wx", mode: 0o600 });
        return new CredentialFiles(dir, "", mine);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      let held = "";
      try {
        held = readFileSync(path, "utf8");
      } catch {
        continue;
      }
      const [ownerText, heldPort] = held.split("\n");
      const owner = parseOwner(ownerText);
      if (owner && !ownerIsDead(owner)) {
        log.info(
          `another drydock serve --http (pid ${owner.pid}, port ${heldPort ?? "?"}) holds ${join(dir, "http-token")}; this server's credentials are written beside it with .${port}`,
        );
        return new CredentialFiles(dir, `.${port}`, undefined);
      }
      rmSync(path, { force: true });
    }
    return new CredentialFiles(dir, `.${port}`, undefined);
  }

  /** Writes the bearer token; returns its path. */
  writeToken(token: string): string {
    return this.write(`http-token${this.suffix}`, token);
  }

  /** Writes the live view's key; returns its path. */
  writeLiveKey(key: string): string {
    return this.write(`live-key${this.suffix}`, key);
  }

  private write(name: string, secret: string): string {
    const file = writeSecret(this.dir, name, secret);
    this.written.push(file);
    return file;
  }

  /** At the server's close: its own files and its claim go; the plain files stay, as they always have. */
  release(): void {
    if (this.suffix !== "") for (const file of this.written) rmSync(file, { force: true });
    if (this.claim === undefined) return;
    const path = join(this.dir, CLAIM);
    try {
      if (readFileSync(path, "utf8") === this.claim) rmSync(path, { force: true });
    } catch {
      // Gone already.
    }
  }
}
