/**
 * `--egress HOST[,HOST…]` (repeatable) on serve and run, checked before anything starts: the
 * allowlist parses, no network is granted beside it, and a CA bundle for the boxes is at hand
 * (`--ca-cert`, else SSL_CERT_FILE, else the system's).
 */
import { parseEgressFlag } from "../gateway/egress-allowlist.js";
import { resolveCaBundle } from "../gateway/egress-ca.js";
import { FlagError } from "../util/errors.js";
import { asFlagError } from "./flag-checks.js";

/** Collects repeated `--egress` values (commander's option argument parser). */
export function collectEgress(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export const EGRESS_HELP =
  "relaxation: hosts boxes may reach over HTTPS through drydock's proxy, comma-separated or repeated: host names, *.domain patterns, or the sets pypi, npm, debian, crates, go, github (default: nothing leaves the box)";

export interface EgressSettings {
  egress?: string[];
  egressCaFile?: string;
}

/** The session options `--egress` and `--ca-cert` make; none without `--egress`. */
export async function egressFlags(
  values: readonly string[] | undefined,
  caCert: string | undefined,
  network: string | undefined,
): Promise<EgressSettings> {
  if (!values?.length) return {};
  const egress = await asFlagError(() => parseEgressFlag(values, "--egress"));
  if (network !== undefined && network !== "none") {
    throw new FlagError(
      "--egress",
      `cannot be combined with --network ${network}: a box on a network reaches hosts directly, so the allowlist would not confine it; drop one of the two`,
    );
  }
  const egressCaFile = await asFlagError(() => resolveCaBundle(caCert));
  return { egress, egressCaFile };
}
