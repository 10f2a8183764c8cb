/**
 * Whether a warm box can serve a session: the box must be exactly what a cold start with the
 * session's options would make. Pure, so the rule is tested without an engine.
 */
import { boxLimits, type BoxOptions } from "../sandbox/box-profile.js";

/** The box options a pool makes its boxes from (no labels, env or gateway directory: those are per session). */
export type PoolProfile = Omit<BoxOptions, "labels" | "env">;

/** What a session asks of its box (the fields of SessionOptions that shape the box). */
export type BoxRequest = Omit<BoxOptions, "image"> & { image: string };

const sorted = (values: readonly string[] | undefined): string => [...(values ?? [])].sort().join(",");

/** Undefined when a pooled box fits the request; otherwise why not, in words for a log. */
export function poolMisfit(profile: PoolProfile, request: BoxRequest): string | undefined {
  if (request.image !== profile.image) return `image ${request.image} (the pool's: ${profile.image})`;
  if (request.runtime !== profile.runtime) {
    return `runtime ${request.runtime ?? "default"} (the pool's: ${profile.runtime ?? "default"})`;
  }
  const want = boxLimits(request);
  const have = boxLimits(profile);
  for (const key of Object.keys(want) as Array<keyof typeof want>) {
    if (want[key] !== have[key]) return `${key} ${want[key]} (the pool's: ${have[key]})`;
  }
  if (!!request.writableRootfs !== !!profile.writableRootfs) return "writableRootfs";
  if (!!request.allowNewPrivileges !== !!profile.allowNewPrivileges) return "allowNewPrivileges";
  if (sorted(request.capAdd) !== sorted(profile.capAdd)) return "capAdd";
  if (sorted(request.egress) !== sorted(profile.egress)) return "egress";
  if (Object.keys(request.env ?? {}).length > 0) return "env (set when the box is created)";
  if (Object.keys(request.labels ?? {}).length > 0) return "labels (set when the box is created)";
  return undefined;
}

/** The profile of a pool serving sessions made from these defaults (the server's image and options). */
export function poolProfile(image: string, defaults: Partial<BoxOptions> = {}): PoolProfile {
  const {
    runtime,
    network,
    memoryMB,
    cpus,
    pidsLimit,
    workspaceMB,
    tmpMB,
    writableRootfs,
    allowNewPrivileges,
    capAdd,
    egress,
  } = defaults;
  return {
    image,
    runtime,
    network,
    memoryMB,
    cpus,
    pidsLimit,
    workspaceMB,
    tmpMB,
    writableRootfs,
    allowNewPrivileges,
    capAdd,
    egress,
  };
}
