/**
 * The hardening profile of a box. The defaults are the safe ones; every relaxation is an explicit
 * option, and `relaxations()` names each one so the caller can log it.
 */
import type { ContainerSpec } from "../engine/container-spec.js";
import { LABEL_KEPT_UNTIL } from "../engine/labels.js";
import type { BoxRuntime } from "./box-runtime.js";
import { egressEnv } from "./egress-env.js";

export const BOX_USER = "1000";
export const BOX_UID = 1000;
export const WORKSPACE = "/workspace";
/** Where a box with egress finds the host's CA bundle (a tmpfs of root's, on Docker). */
export const RUN_DIR_IN_BOX = "/run/drydock";

export interface BoxOptions {
  image: string;
  /** The OCI runtime (default: DRYDOCK_RUNTIME, else runc); see box-runtime.ts. */
  runtime?: BoxRuntime;
  /** Docker network to join; "none" (the default) means no network at all. */
  network?: string;
  memoryMB?: number;
  cpus?: number;
  pidsLimit?: number;
  /** Size of the in-memory /workspace (counted against memoryMB). */
  workspaceMB?: number;
  tmpMB?: number;
  /** Relaxation: a writable root filesystem. */
  writableRootfs?: boolean;
  /** Relaxation: allow setuid programs to gain privileges. */
  allowNewPrivileges?: boolean;
  /** Relaxation: capabilities to keep (all are dropped by default). */
  capAdd?: string[];
  /**
   * Relaxation: hosts (canonical egress rules) the box may reach over HTTPS through the session's
   * egress proxy on the host. Empty or absent: nothing leaves the box.
   */
  egress?: readonly string[];
  env?: Record<string, string>;
  labels?: Record<string, string>;
}

export const DEFAULT_LIMITS = {
  memoryMB: 2048,
  cpus: 1,
  pidsLimit: 256,
  workspaceMB: 1024,
  tmpMB: 512,
} as const;

export interface BoxLimits {
  network: string;
  memoryMB: number;
  cpus: number;
  pidsLimit: number;
  workspaceMB: number;
  tmpMB: number;
}

export function boxLimits(options: BoxOptions): BoxLimits {
  return {
    network: options.network ?? "none",
    memoryMB: options.memoryMB ?? DEFAULT_LIMITS.memoryMB,
    cpus: options.cpus ?? DEFAULT_LIMITS.cpus,
    pidsLimit: options.pidsLimit ?? DEFAULT_LIMITS.pidsLimit,
    workspaceMB: options.workspaceMB ?? DEFAULT_LIMITS.workspaceMB,
    tmpMB: options.tmpMB ?? DEFAULT_LIMITS.tmpMB,
  };
}

/** Each way these options are weaker than the default profile, in words for a log. */
export function relaxations(options: BoxOptions): string[] {
  const out: string[] = [];
  if ((options.network ?? "none") !== "none") out.push(`network "${options.network}" (default: none)`);
  if (options.writableRootfs) out.push("writable root filesystem (default: read-only)");
  if (options.allowNewPrivileges) out.push("new privileges allowed (default: no-new-privileges)");
  if (options.capAdd?.length) out.push(`capabilities kept: ${options.capAdd.join(", ")} (default: none)`);
  if (options.egress?.length) {
    out.push(
      `egress over HTTPS to ${options.egress.join(", ")} through the host's proxy, home directory executable for what pip installs there (default: nothing leaves the box)`,
    );
  }
  return out;
}

/**
 * The engine's pids limit of a runsc box. The host counts gVisor's own threads and, on its ptrace
 * platform, a stub thread for each thread of the box: at the box's limit alone gVisor cannot make
 * them, its kernel stops, and the box is lost (aider's threads were enough). gVisor does not count
 * the box's processes against the limit itself, so under runsc a fork bomb runs until this larger
 * limit and then stops the box, the host untouched (docs/runtimes.md).
 */
export function runscHostPids(pidsLimit: number): number {
  return pidsLimit * 2 + 512;
}

/**
 * The processes a runsc box may hold where the backend counts them inside gVisor's sandbox
 * (RLIMIT_NPROC; the Kubernetes backend). gVisor spends about four host threads per process of the
 * box, so within runscHostPids(limit) host threads half the limit fits and the box goes on when a
 * fork bomb is refused; at the whole limit the host's count ends the sandbox first.
 */
export function runscProcesses(pidsLimit: number): number {
  return Math.max(16, Math.floor(pidsLimit / 2));
}

export function boxSpec(options: BoxOptions, name?: string): ContainerSpec {
  const limits = boxLimits(options);
  const egress = (options.egress?.length ?? 0) > 0;
  return {
    image: options.image,
    name,
    labels: options.labels ?? {},
    user: BOX_USER,
    workdir: WORKSPACE,
    env: { HOME: "/home/agent", ...(egress ? egressEnv() : {}), ...options.env },
    command: ["sleep", "infinity"],
    // A box kept for a later server outlives this one; every other box ends with it.
    endsWithMaker: !(LABEL_KEPT_UNTIL in (options.labels ?? {})),
    network: limits.network,
    memoryMB: limits.memoryMB,
    cpus: limits.cpus,
    pidsLimit: options.runtime === "runsc" ? runscHostPids(limits.pidsLimit) : limits.pidsLimit,
    ...(options.runtime === "runsc" ? { processLimit: runscProcesses(limits.pidsLimit) } : {}),
    readOnlyRootfs: !options.writableRootfs,
    capDrop: ["ALL"],
    capAdd: options.capAdd ?? [],
    noNewPrivileges: !options.allowNewPrivileges,
    tmpfs: [
      { path: WORKSPACE, sizeMB: limits.workspaceMB, uid: BOX_UID, gid: BOX_UID, exec: true, mode: "0755" },
      { path: "/tmp", sizeMB: limits.tmpMB, uid: 0, gid: 0, exec: true, mode: "1777" },
      // With egress, `pip install` puts packages in ~/.local: their compiled parts must load.
      { path: "/home/agent", sizeMB: 256, uid: BOX_UID, gid: BOX_UID, exec: egress, mode: "0755" },
      // With egress, the host's CA bundle (session-egress.ts writes it as root).
      ...(egress ? [{ path: RUN_DIR_IN_BOX, sizeMB: 4, uid: 0, gid: 0, exec: false, mode: "0755" }] : []),
    ],
    nofile: 4096,
    runtime: options.runtime,
  };
}
