/**
 * A relay inside a box: socat listening on 127.0.0.1:PORT in the box's own network namespace and
 * forwarding each connection to a unix socket bind-mounted from the host (under /run/drydock).
 * This is how a box with network none reaches the session's LLM gateway and egress proxy.
 */
import { CommandExitError } from "../util/errors.js";
import type { Box } from "./box.js";

// The image's drydock-relay script passes `-d0` to socat, which bookworm's socat 1.7.4 rejects;
// socat is started directly here instead.
const ENSURE_RELAY = `
port=$1 sock=$2
up() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
up && exit 0
if [ ! -S "$sock" ]; then echo "the socket $sock is missing in the box" >&2; exit 3; fi
nohup socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$sock" >/dev/null 2>&1 </dev/null &
for _ in $(seq 100); do up && exit 0; sleep 0.05; done
echo "socat did not start listening on 127.0.0.1:$port" >&2
exit 4
`;

/** Starts the relay unless something already listens on the port; cheap when it does. */
export async function ensureSocketRelay(
  box: Box,
  port: number,
  socketInBox: string,
  what: string,
  signal?: AbortSignal,
): Promise<void> {
  const result = await box.sh(ENSURE_RELAY, [String(port), socketInBox], { timeoutMs: 30_000, signal });
  if (result.exitCode !== 0) {
    throw new CommandExitError(
      result.exitCode,
      result.stderr.toString("utf8"),
      `starting the ${what} in the box`,
    );
  }
}
