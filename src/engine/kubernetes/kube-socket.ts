/**
 * Opening a pods/exec WebSocket, and what its failures mean in drydock's terms. The client library
 * gives only the API server's address and the credentials (TLS material, a bearer token); the
 * socket is `ws`'s, so the exec and the terminal control reading, writing and closing themselves.
 */
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import WebSocket, { type ClientOptions } from "ws";
import { BoxGoneError, DrydockError, EngineUnavailableError } from "../../util/errors.js";
import { logger } from "../../util/log.js";
import { EXEC_PROTOCOL, execPath, parseFrame, upgradeFailure, type Frame } from "./kube-channel.js";

const log = logger("engine");
/** How long the API server may take to answer the upgrade. */
const HANDSHAKE_TIMEOUT_MS = 30_000;
/** Errors of a connection that never reached the API server. */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "EAI_AGAIN",
]);
/** Enough of a refused upgrade's body for its Status message. */
const MAX_BODY_BYTES = 64 * 1024;

/** The container a program runs in: the box's container in its Pod. */
export interface PodTarget {
  kc: KubeConfig;
  namespace: string;
  pod: string;
  container: string;
}

/** An open exec socket. */
export interface ExecSocket {
  socket: WebSocket;
  /** Resolves once the socket has closed, with the error that closed it if one did; never rejects. */
  closed: Promise<Error | undefined>;
}

/**
 * Opens the exec WebSocket for argv in the target's container; rejects with drydock's errors.
 * `onFrame` is told of every frame from the start: output can arrive with the upgrade's answer,
 * before the caller's code runs again.
 */
export async function openExecSocket(
  target: PodTarget,
  argv: readonly string[],
  streams: { stdin: boolean; tty: boolean },
  onFrame: (frame: Frame) => void,
): Promise<ExecSocket> {
  const what = `exec ${argv[0]} in pod ${target.pod}`;
  const cluster = target.kc.getCurrentCluster();
  if (!cluster) throw new DrydockError("engine_error", `${what}: the kubeconfig names no current cluster`);
  const url = `${cluster.server.replace(/^http/, "ws")}${execPath(target.namespace, target.pod, target.container, argv, streams)}`;
  const options: ClientOptions = { handshakeTimeout: HANDSHAKE_TIMEOUT_MS };
  try {
    await target.kc.applyToHTTPSOptions(options as Parameters<KubeConfig["applyToHTTPSOptions"]>[0]);
  } catch (error) {
    throw new DrydockError(
      "engine_error",
      `${what}: no credentials for ${cluster.server}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const socket = new WebSocket(url, [EXEC_PROTOCOL], options);
  socket.on("message", (message: Buffer, isBinary: boolean) => {
    if (isBinary) onFrame(parseFrame(message));
  });
  // ws reports a failed socket by "error" then "close".
  let failure: Error | undefined;
  /** The API server answered the upgrade with a refusal: the refusal is the answer, not the socket's end. */
  let refused = false;
  const closed = new Promise<Error | undefined>((resolve) => socket.on("close", () => resolve(failure)));
  return new Promise<ExecSocket>((resolve, reject) => {
    socket.on("open", () => {
      if (socket.protocol !== EXEC_PROTOCOL) {
        socket.terminate();
        reject(
          new DrydockError(
            "engine_error",
            `${what}: the API server does not speak ${EXEC_PROTOCOL} (Kubernetes 1.30 or later does)`,
          ),
        );
        return;
      }
      log.debug(`${target.pod}: ${argv[0]} started${streams.tty ? " on a terminal" : ""}`);
      resolve({ socket, closed });
    });
    socket.on("unexpected-response", (_request, response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        if (size < MAX_BODY_BYTES) chunks.push(chunk);
        size += chunk.length;
      });
      response.on("end", () => {
        const failure = upgradeFailure(response.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"));
        log.debug(`${what} refused: ${failure.message}`);
        refused = true;
        socket.terminate();
        // Whatever the words, a refusal for a Pod that is gone is the box's going.
        void (async () =>
          failure.gone || (response.statusCode ?? 0) === 403 ? failure.gone : podGone(target))().then(
          (gone) =>
            reject(
              gone
                ? new BoxGoneError(target.pod, { cause: new Error(failure.message) })
                : new DrydockError("engine_error", `${what} failed: ${failure.message}`),
            ),
        );
      });
    });
    socket.on("error", (error) => {
      failure ??= error;
      // Before the upgrade it is the answer (unless the API server refused it: that is told
      // above); after it, `closed` tells it.
      if (!refused) reject(connectError(error, what, cluster.server));
    });
  });
}

/** A socket error before the upgrade: the API server unreachable, or something else. */
function connectError(error: Error & { code?: string }, what: string, server: string): DrydockError {
  if (error.code && UNREACHABLE.has(error.code)) {
    return new EngineUnavailableError(`the Kubernetes API server at ${server} (${what}): ${error.message}`, {
      cause: error,
    });
  }
  return new DrydockError("engine_error", `${what} failed: ${error.message}`, { cause: error });
}

/**
 * Whether the target's pod is gone: deleted, being deleted, or its container no longer running.
 * Asked only when a program ended by a signal or without a status, as a deleted pod's do.
 */
export async function podGone(target: PodTarget): Promise<boolean> {
  try {
    const pod = await target.kc
      .makeApiClient(CoreV1Api)
      .readNamespacedPod({ name: target.pod, namespace: target.namespace });
    if (pod.metadata?.deletionTimestamp) return true;
    const state = pod.status?.containerStatuses?.find((c) => c.name === target.container)?.state;
    return !state?.running;
  } catch (error) {
    return (error as { code?: number }).code === 404;
  }
}

/** The error for a socket that failed after the upgrade: the box gone, or the connection lost. */
export async function socketError(
  target: PodTarget,
  argv: readonly string[],
  error: Error,
): Promise<DrydockError> {
  if (await podGone(target)) return new BoxGoneError(target.pod, { cause: error });
  return new DrydockError("engine_error", `exec ${argv[0]} in pod ${target.pod} failed: ${error.message}`, {
    cause: error,
  });
}
