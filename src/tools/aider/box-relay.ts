/**
 * The box's only way to a model: socat listening on 127.0.0.1:RELAY_PORT inside the box, relaying
 * to the session gateway's unix socket bind-mounted at /run/drydock. The box keeps network none.
 */
import { GATEWAY_DIR_IN_BOX } from "../../sandbox/box-profile.js";
import type { Box } from "../../sandbox/box.js";
import { CommandExitError } from "../../util/errors.js";

/** The port aider's base URLs point at, inside the box's own network namespace. */
export const RELAY_PORT = 47_011;

/** The socket's name in the session's gateway directory (host) and in /run/drydock (box). */
export const GATEWAY_SOCKET_NAME = "gateway.sock";

// The image's drydock-relay script passes `-d0` to socat, which bookworm's socat 1.7.4 rejects;
// socat is started directly here instead.
const ENSURE_RELAY = `
port=$1 sock=$2
up() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
up && exit 0
if [ ! -S "$sock" ]; then echo "the gateway socket $sock is missing in the box" >&2; exit 3; fi
nohup socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$sock" >/dev/null 2>&1 </dev/null &
for _ in $(seq 100); do up && exit 0; sleep 0.05; done
echo "socat did not start listening on 127.0.0.1:$port" >&2
exit 4
`;

/** Starts the relay unless it is already listening; cheap when it is. */
export async function ensureRelay(box: Box, signal?: AbortSignal): Promise<void> {
  const result = await box.sh(
    ENSURE_RELAY,
    [String(RELAY_PORT), `${GATEWAY_DIR_IN_BOX}/${GATEWAY_SOCKET_NAME}`],
    {
      timeoutMs: 30_000,
      signal,
    },
  );
  if (result.exitCode !== 0) {
    throw new CommandExitError(
      result.exitCode,
      result.stderr.toString("utf8"),
      "starting the LLM relay in the box",
    );
  }
}
