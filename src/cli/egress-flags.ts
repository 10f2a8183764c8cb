/**
 * `--egress HOST[,HOST…]` (repeatable) on serve and run, checked before anything starts: the
 * allowlist parses, no network is granted beside it, and a CA bundle for the boxes is at hand
 * (`--ca-cert`, else SSL_CERT_FILE, else the system's). `--egress-allow-private CIDR` opens a
 * private or local range to allowed names; it is a relaxation, so it is logged when given.
 */
import { parseAddressRanges, rangeText, type AddressRange } from "../gateway/egress-address-policy.js";
import { parseEgressFlag } from "../gateway/egress-allowlist.js";
import { resolveCaBundle } from "../gateway/egress-ca.js";
import { FlagError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { asFlagError } from "./flag-checks.js";

const log = logger("egress");

/** Collects repeated `--egress` values (commander's option argument parser). */
export function collectEgress(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export const EGRESS_HELP =
  "relaxation: hosts boxes may reach over HTTPS through drydock's proxy, comma-separated or repeated: host names, *.domain patterns, or the sets pypi, npm, debian, crates, go, github (default: nothing leaves the box)";

export const EGRESS_ALLOW_PRIVATE_HELP =
  "relaxation: with --egress, an address or CIDR range (private, loopback, link-local, the host's own…) allowed names may lead to, comma-separated or repeated; the host's own addresses open only when named alone (default: all refused)";

export interface EgressSettings {
  egress?: string[];
  egressCaFile?: string;
  egressAllowPrivate?: AddressRange[];
}

/** The session options `--egress`, `--egress-allow-private` and `--ca-cert` make; none without `--egress`. */
export async function egressFlags(
  values: readonly string[] | undefined,
  caCert: string | undefined,
  network: string | undefined,
  allowPrivate: readonly string[] = [],
): Promise<EgressSettings> {
  const ranges = await asFlagError(() => parseAddressRanges(allowPrivate, "--egress-allow-private"));
  if (!values?.length) {
    if (ranges.length) {
      throw new FlagError(
        "--egress-allow-private",
        "opens ranges to the egress proxy, which only --egress starts; add --egress HOSTS or drop it",
      );
    }
    return {};
  }
  const egress = await asFlagError(() => parseEgressFlag(values, "--egress"));
  if (network !== undefined && network !== "none") {
    throw new FlagError(
      "--egress",
      `cannot be combined with --network ${network}: a box on a network reaches hosts directly, so the allowlist would not confine it; drop one of the two`,
    );
  }
  const egressCaFile = await asFlagError(() => resolveCaBundle(caCert));
  if (ranges.length === 0) return { egress, egressCaFile };
  log.warn(
    `relaxation: allowed names may lead boxes to ${ranges.map(rangeText).join(", ")} (--egress-allow-private; default: private, local and the host's own addresses are refused)`,
  );
  return { egress, egressCaFile, egressAllowPrivate: ranges };
}
