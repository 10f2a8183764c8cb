import { chmod, chown, lstat, mkdir, unlink } from "node:fs/promises";
import { connect } from "node:net";
import { dirname } from "node:path";
import { logger } from "../util/log.js";

const log = logger("gateway");

/** The box's user (see Dockerfile.sandbox): the gateway socket must be connectable by it. */
export const BOX_UID = 1000;
export const BOX_GID = 1000;

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
 * Lets the box user, and no other user of the host, connect: the socket is 0666 inside a directory
 * of mode 0700 owned by the box user (root on the host passes anyway). That needs root to chown;
 * without root the directory stays ours, so it is made 0711 (enter, not list) and a warning says
 * that local users who know the path could reach the gateway, unless we already are the box user.
 */
export async function grantBoxAccess(socketPath: string, boxUid = BOX_UID, boxGid = BOX_GID): Promise<void> {
  const dir = dirname(socketPath);
  await chmod(socketPath, 0o666);
  const uid = process.getuid?.();
  if (uid === 0) {
    await chown(dir, boxUid, boxGid);
    await chmod(dir, 0o700);
  } else if (uid === boxUid) {
    await chmod(dir, 0o700);
  } else {
    await chmod(dir, 0o711);
    log.warn(
      `gateway socket directory ${dir} is enterable by every local user (drydock runs as uid ${uid}, not root or the box's uid ${boxUid}); a local user who knows the path could use the provider keys`,
    );
  }
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
