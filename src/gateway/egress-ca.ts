/**
 * The CA bundle a box with egress trusts: a copy of the host's. Behind a TLS-intercepting proxy
 * the host trusts the proxy's CA; a box trusts it only when given the bundle.
 */
import { readFileSync, statSync } from "node:fs";
import { InvalidArgumentError } from "../util/errors.js";

/** Where the system bundle sits on Debian/Ubuntu/Alpine, Fedora/RHEL, and macOS/BSD. */
export const SYSTEM_CA_BUNDLES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
];

const MAX_BUNDLE_BYTES = 16 * 1024 * 1024;

/**
 * The bundle to give boxes: `explicit` (`--ca-cert`), else SSL_CERT_FILE, else the system's. Throws
 * `InvalidArgumentError` naming `--ca-cert` when the file is missing or holds no certificate.
 */
export function resolveCaBundle(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit !== undefined) {
    checkBundle(explicit, "--ca-cert");
    return explicit;
  }
  if (env.SSL_CERT_FILE) {
    checkBundle(env.SSL_CERT_FILE, "--ca-cert", " (from SSL_CERT_FILE)");
    return env.SSL_CERT_FILE;
  }
  const found = SYSTEM_CA_BUNDLES.find((path) => statSync(path, { throwIfNoEntry: false })?.isFile());
  if (!found) {
    throw new InvalidArgumentError(
      "--ca-cert",
      `no CA bundle found (looked at SSL_CERT_FILE and ${SYSTEM_CA_BUNDLES.join(", ")}); boxes with egress need one to check the hosts' certificates: pass --ca-cert PATH`,
    );
  }
  checkBundle(found, "--ca-cert");
  return found;
}

function checkBundle(path: string, flag: string, origin = ""): void {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat?.isFile()) {
    throw new InvalidArgumentError(
      flag,
      `${path}${origin} is not a file; give a PEM file of CA certificates`,
    );
  }
  if (stat.size > MAX_BUNDLE_BYTES) {
    throw new InvalidArgumentError(
      flag,
      `${path}${origin} is ${stat.size} bytes, more than a CA bundle holds`,
    );
  }
  if (!readFileSync(path, "latin1").includes("-----BEGIN CERTIFICATE-----")) {
    throw new InvalidArgumentError(
      flag,
      `${path}${origin} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
  }
}
