/**
 * What a box with egress sees: a relay on its own loopback leading to the session's egress proxy
 * on the host (a unix socket in /run/drydock), the proxy in the variables HTTP clients read, and
 * the host's CA bundle (copied into /run/drydock) in the variables TLS clients read. A box without
 * egress gets none of these.
 */
import { RUN_DIR_IN_BOX } from "./box-profile.js";

/** The port of the in-box relay to the egress proxy (the LLM relay has 47011). */
export const EGRESS_RELAY_PORT = 47_012;

/** The proxy's socket in the session's gateway directory (host) and in /run/drydock (box). */
export const EGRESS_SOCKET_NAME = "egress.sock";

/** The copy of the host's CA bundle, beside the socket. */
export const CA_BUNDLE_NAME = "ca-certificates.crt";

/** The environment of a box with egress. */
export function egressEnv(): Record<string, string> {
  // Computed here, not at load: box-profile.ts imports this module.
  const ca = `${RUN_DIR_IN_BOX}/${CA_BUNDLE_NAME}`;
  const proxy = `http://127.0.0.1:${EGRESS_RELAY_PORT}`;
  // The box's own loopback (the LLM relay, servers the agent starts) never goes through the proxy.
  const local = "localhost,127.0.0.1,::1";
  return {
    HTTPS_PROXY: proxy,
    https_proxy: proxy,
    // Clients that tunnel plain http too get a clear refusal from the proxy instead of a timeout.
    HTTP_PROXY: proxy,
    http_proxy: proxy,
    NO_PROXY: local,
    no_proxy: local,
    SSL_CERT_FILE: ca,
    REQUESTS_CA_BUNDLE: ca,
    PIP_CERT: ca,
    NODE_EXTRA_CA_CERTS: ca,
    CURL_CA_BUNDLE: ca,
    GIT_SSL_CAINFO: ca,
    // The project's venv is read-only at run time and sees the user site: pip installs there.
    PIP_USER: "1",
  };
}
