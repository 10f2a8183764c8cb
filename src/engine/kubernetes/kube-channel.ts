/**
 * The `v5.channel.k8s.io` framing of a pods/exec WebSocket: each binary message starts with the
 * byte of its channel (0 stdin, 1 stdout, 2 stderr, 3 status, 4 resize, 255 close); and the
 * request that opens one. Pure, so the frames the API server never sends on purpose (a status that
 * is not JSON) are tested without one.
 */

export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, status: 3, resize: 4, close: 255 } as const;

/** The exec subprotocol: v5 is the first that can close stdin while output still flows. */
export const EXEC_PROTOCOL = "v5.channel.k8s.io";

/** How a program ended, as the status channel tells it. */
export type ExecStatus =
  /** It ran and exited with this status (128 + n for signal n). */
  | { kind: "exited"; exitCode: number }
  /** The runtime could not start it (not found, not executable): Docker's exit 126. */
  | { kind: "not-started"; message: string }
  /** The pod or its container is gone or not running. */
  | { kind: "gone"; message: string }
  /** Anything else, including a status that is not the JSON the protocol promises. */
  | { kind: "error"; message: string };

export type Frame =
  | { kind: "stdout" | "stderr"; data: Buffer }
  | { kind: "status"; status: ExecStatus }
  /** Empty frames (each stream's opening one) and channels a client never reads. */
  | { kind: "ignored" };

/** The runtime's words (runc's, then runsc's) when the program itself could not be started. */
const NOT_STARTED =
  /OCI runtime exec failed.*(executable file not found|error finding executable|permission denied|no such file or directory|failed to load|is a directory)/is;
/** The API server's or the runtime's words for a pod or container that is gone or not running. */
const GONE =
  /container .*not (found|valid|running)|container not found|not running|stopped container|completed pod|does not have a host assigned|pods? "[^"]*" not found/i;

/** The API server's words when it cannot reach a node's kubelet (restarting, or its address unreachable). */
const NODE_UNREACHABLE =
  /error dialing backend|dial tcp .*(connection refused|i\/o timeout|no route to host)|tunnel .*(closed|disconnect)/i;

/** One binary message from the API server. */
export function parseFrame(message: Buffer): Frame {
  const channel = message[0];
  const data = message.subarray(1);
  if (channel === CHANNEL.status) return { kind: "status", status: parseStatus(data.toString("utf8")) };
  if (data.length === 0) return { kind: "ignored" };
  if (channel === CHANNEL.stdout) return { kind: "stdout", data };
  if (channel === CHANNEL.stderr) return { kind: "stderr", data };
  return { kind: "ignored" };
}

/** A metav1.Status from the status channel, as how the program ended. */
export function parseStatus(text: string): ExecStatus {
  let status: unknown;
  try {
    status = JSON.parse(text);
  } catch {
    return { kind: "error", message: `the exec status is not JSON: ${JSON.stringify(text.slice(0, 200))}` };
  }
  if (typeof status !== "object" || status === null) {
    return {
      kind: "error",
      message: `the exec status is not an object: ${JSON.stringify(text.slice(0, 200))}`,
    };
  }
  const s = status as {
    status?: unknown;
    reason?: unknown;
    message?: unknown;
    details?: { causes?: { reason?: unknown; message?: unknown }[] };
  };
  if (s.status === "Success") return { kind: "exited", exitCode: 0 };
  const message = typeof s.message === "string" ? s.message : JSON.stringify(text.slice(0, 200));
  if (s.status !== "Failure") return { kind: "error", message: `unknown exec status: ${message}` };
  if (s.reason === "NonZeroExitCode") {
    const cause = Array.isArray(s.details?.causes)
      ? s.details.causes.find((c) => c?.reason === "ExitCode")
      : undefined;
    const code = typeof cause?.message === "string" ? Number(cause.message) : NaN;
    if (Number.isInteger(code)) return { kind: "exited", exitCode: code };
    return { kind: "error", message: `an exit status without its code: ${message}` };
  }
  if (NOT_STARTED.test(message)) return { kind: "not-started", message: runtimeMessage(message) };
  if (GONE.test(message)) return { kind: "gone", message };
  return { kind: "error", message };
}

/** The runtime's own sentence, without the API server's "Internal error occurred: " prefixes. */
function runtimeMessage(message: string): string {
  return message.replace(/^(Internal error occurred: )+/, "");
}

/**
 * What a refused upgrade (an HTTP answer other than 101) means: the pod or container is gone or
 * not running (404, or a 400 that says so), or something else.
 */
export function upgradeFailure(statusCode: number, body: string): { gone: boolean; message: string } {
  let message = body.trim().slice(0, 500) || `HTTP ${statusCode}`;
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") message = parsed.message;
  } catch {
    // Not a Status: the body as it is.
  }
  // The kubelet's own refusal comes back through the API server as a 500 ("container not found").
  const gone = statusCode === 404 || ((statusCode === 400 || statusCode === 500) && GONE.test(message));
  if (statusCode >= 500 && NODE_UNREACHABLE.test(message)) {
    return {
      gone: false,
      message: `the API server could not reach the kubelet of the box's node (${statusCode}: ${message}): the node or its kubelet may be restarting; try again in a moment (kubectl get nodes shows whether it is Ready)`,
    };
  }
  return { gone, message: `${statusCode}: ${message}` };
}

/** A frame on a channel: the channel's byte, then the data. */
export function frame(channel: number, data: Buffer | string): Buffer {
  const bytes = typeof data === "string" ? Buffer.from(data) : data;
  return Buffer.concat([Buffer.from([channel]), bytes]);
}

/** The v5 message that closes stdin while the program's output still comes back. */
export function closeStdinFrame(): Buffer {
  return Buffer.from([CHANNEL.close, CHANNEL.stdin]);
}

/** A terminal size on the resize channel. */
export function resizeFrame(cols: number, rows: number): Buffer {
  return frame(CHANNEL.resize, JSON.stringify({ Width: cols, Height: rows }));
}

/** The pods/exec path: one `command` per argv word, and which streams to attach. */
export function execPath(
  namespace: string,
  pod: string,
  container: string,
  argv: readonly string[],
  streams: { stdin: boolean; tty: boolean },
): string {
  const query = new URLSearchParams();
  for (const word of argv) query.append("command", word);
  query.set("container", container);
  query.set("stdin", String(streams.stdin));
  query.set("stdout", "true");
  // With a terminal, stderr is the terminal too: the API server refuses a separate stream.
  query.set("stderr", String(!streams.tty));
  query.set("tty", String(streams.tty));
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/exec?${query}`;
}

/** The argv that applies workdir and env, which pods/exec has no fields for. */
export function withWorkdirAndEnv(
  argv: readonly string[],
  options: { workdir?: string; env?: Record<string, string> },
): string[] {
  const env = Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`);
  if (options.workdir === undefined && env.length === 0) return [...argv];
  const chdir = options.workdir === undefined ? [] : [`--chdir=${options.workdir}`];
  // After "--" env still reads NAME=VALUE words, and no name is taken for an option.
  return ["/usr/bin/env", ...chdir, "--", ...env, ...argv];
}
