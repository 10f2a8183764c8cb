/**
 * What the engine needs to create a box, in drydock's terms. `toCreateOptions` maps it to the
 * Docker Engine API; it is pure so the hardening it produces can be checked without an engine.
 */
import type { ContainerCreateOptions } from "dockerode";

export interface TmpfsMount {
  path: string;
  sizeMB: number;
  /** Owner of the mount's root, so the non-root user can write there. */
  uid: number;
  gid: number;
  exec: boolean;
  /** Octal permission bits of the mount's root, e.g. "1777" for a shared /tmp. */
  mode: string;
}

export interface ContainerSpec {
  image: string;
  name?: string;
  labels: Record<string, string>;
  user: string;
  workdir: string;
  env: Record<string, string>;
  command: string[];
  /** "none" unless a relaxation asks for a Docker network by name. */
  network: string;
  memoryMB: number;
  cpus: number;
  pidsLimit: number;
  readOnlyRootfs: boolean;
  capDrop: string[];
  capAdd: string[];
  noNewPrivileges: boolean;
  /**
   * The box's only mounts besides its image. A spec has no field for a host path: no box shares a
   * directory with the host, on any engine (the gateway and egress proxy reach a box through
   * drydock's relay, src/sandbox/stream-relay.ts).
   */
  tmpfs: TmpfsMount[];
  /** Open files per process. */
  nofile: number;
  /**
   * The box's own process limit where the runtime counts the box's processes itself (gVisor,
   * inside its sandbox), besides `pidsLimit` on the host's threads; a backend that can set it (the
   * Kubernetes one, as RLIMIT_NPROC in each exec) does. Absent: pidsLimit is the box's limit.
   */
  processLimit?: number;
  /** The engine's OCI runtime by its registered name ("runc", "runsc"); absent: the engine's default. */
  runtime?: string;
  /**
   * The box ends when the process that made it goes: an engine that can (Docker) runs
   * HOLDER_COMMAND instead of `command`, reading a stdin that the maker holds open, so a drydock
   * killed without a word (SIGKILL, an SDK closing its server) leaves no box running. Boxes kept
   * for another server (`serve --keep-sessions`) do not.
   */
  endsWithMaker?: boolean;
}

/**
 * A box's first process when it ends with its maker: it waits on a stdin that only the maker's
 * attach holds open, and ends at end of file. Lines written to it change nothing (only the
 * shell's builtins run; the last word names it in a process listing).
 */
export const HOLDER_COMMAND = ["sh", "-c", "while read -r _; do :; done", "drydock-box"];

export function toCreateOptions(spec: ContainerSpec): ContainerCreateOptions {
  const tmpfs: Record<string, string> = {};
  for (const t of spec.tmpfs) {
    tmpfs[t.path] = [
      "rw",
      t.exec ? "exec" : "noexec",
      "nosuid",
      "nodev",
      `size=${t.sizeMB}m`,
      `uid=${t.uid}`,
      `gid=${t.gid}`,
      `mode=${t.mode}`,
    ].join(",");
  }
  return {
    Image: spec.image,
    name: spec.name,
    Labels: spec.labels,
    User: spec.user,
    WorkingDir: spec.workdir,
    Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
    Cmd: spec.endsWithMaker ? HOLDER_COMMAND : spec.command,
    Tty: false,
    // Closed for good when the maker's attach goes (StdinOnce): the holder then reads end of file.
    OpenStdin: spec.endsWithMaker === true,
    StdinOnce: spec.endsWithMaker === true,
    AttachStdin: spec.endsWithMaker === true,
    NetworkDisabled: spec.network === "none",
    HostConfig: {
      NetworkMode: spec.network,
      Memory: spec.memoryMB * 1024 * 1024,
      // Equal to Memory: no swap, so a memory bomb meets the limit instead of the host's disk.
      MemorySwap: spec.memoryMB * 1024 * 1024,
      NanoCpus: Math.round(spec.cpus * 1e9),
      PidsLimit: spec.pidsLimit,
      ReadonlyRootfs: spec.readOnlyRootfs,
      CapDrop: spec.capDrop,
      CapAdd: spec.capAdd.length > 0 ? spec.capAdd : undefined,
      SecurityOpt: spec.noNewPrivileges ? ["no-new-privileges:true"] : [],
      Tmpfs: tmpfs,
      Init: true,
      // The box's own stdout and stderr (its init and first process) are kept nowhere: with the
      // engine's default driver the agent could write without end to a file on the host's disk
      // through /proc/1/fd/1. drydock reads nothing from them; every program it runs has streams
      // of its own.
      LogConfig: { Type: "none", Config: {} },
      IpcMode: "private",
      Ulimits: [{ Name: "nofile", Soft: spec.nofile, Hard: spec.nofile }],
      AutoRemove: false,
      Privileged: false,
      PublishAllPorts: false,
      ...(spec.runtime ? { Runtime: spec.runtime } : {}),
    },
  };
}
