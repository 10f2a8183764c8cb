import { chmod, lstat, mkdir, unlink } from "node:fs/promises";
import { connect } from "node:net";
import { dirname } from "node:path";

/**
 * Creates the socket's directory and removes a stale socket left by a crash. A socket something
 * still listens on, or a file that is not a socket, is an error.
 */
export async function prepareSocketPath(socketPath: string): Promise<void> {
  // sun_path holds 108 bytes on Linux (104 on macOS), the terminating NUL included.
  if (Buffer.byteLength(socketPath) > 103) {
    throw new Error(
      `socket path ${socketPath} is longer than the 103 bytes a unix socket path may have; use a shorter state directory (DRYDOCK_STATE_DIR)`,
    );
  }
  await mkdir(dirname(socketPath), { recursive: true, mode: 0o700 });
  const existing = await lstat(socketPath).catch(() => undefined);
  if (!existing) return;
  if (!existing.isSocket()) {
    throw new Error(`${socketPath} exists and is not a socket; remove it or choose another socket path`);
  }
  if (await answers(socketPath)) {
    throw new Error(`another process is listening on ${socketPath}; stop it or choose another socket path`);
  }
  await unlink(socketPath);
}

/**
 * Lets no one but drydock's user connect: the socket is 0600 (a directory prepareSocketPath made is
 * 0700; one that existed is left as it is). No box reaches it through the file system (boxes get
 * no host path); drydock's relay connects to it for the box (src/sandbox/stream-relay.ts).
 */
export async function keepSocketPrivate(socketPath: string): Promise<void> {
  await chmod(socketPath, 0o600);
}

function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
