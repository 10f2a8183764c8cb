/**
 * The memory a box uses now, as its cgroup counts it: its processes and its tmpfs pages, less
 * file pages the kernel may drop (inactive_file), as `docker stats` shows it. Read from the cgroup
 * files when the engine runs on this host (a file read per box), else from the engine's stats API.
 */
import { readFile } from "node:fs/promises";
import type { Engine } from "./engine.js";

export interface BoxMemory {
  usedMiB: number;
  /** The box's memory limit; Infinity when it has none. */
  limitMiB: number;
}

const MiB = 1024 * 1024;

/** The cgroup directories a container's memory may be in: cgroup v1 and v2, cgroupfs and systemd. */
function cgroupDirs(root: string, id: string): Array<{ dir: string; v2: boolean }> {
  return [
    { dir: `${root}/memory/docker/${id}`, v2: false },
    { dir: `${root}/memory/system.slice/docker-${id}.scope`, v2: false },
    { dir: `${root}/system.slice/docker-${id}.scope`, v2: true },
    { dir: `${root}/docker/${id}`, v2: true },
  ];
}

function statField(stat: string, name: string): number {
  const m = new RegExp(`^${name} (\\d+)$`, "m").exec(stat);
  return m ? Number(m[1]) : 0;
}

/** Usage less inactive file pages, and the limit (bytes); a limit past 2^60 means none. */
export function workingSet(usage: number, inactiveFile: number, limit: number): BoxMemory {
  return {
    usedMiB: Math.max(0, usage - inactiveFile) / MiB,
    limitMiB: limit > 2 ** 60 || !Number.isFinite(limit) ? Infinity : limit / MiB,
  };
}

async function fromCgroup(root: string, id: string): Promise<BoxMemory | undefined> {
  for (const { dir, v2 } of cgroupDirs(root, id)) {
    try {
      const [usage, stat, limit] = await Promise.all(
        (v2
          ? ["memory.current", "memory.stat", "memory.max"]
          : ["memory.usage_in_bytes", "memory.stat", "memory.limit_in_bytes"]
        ).map((file) => readFile(`${dir}/${file}`, "utf8")),
      );
      const inactive = statField(stat!, v2 ? "inactive_file" : "total_inactive_file");
      return workingSet(Number(usage), inactive, limit!.trim() === "max" ? Infinity : Number(limit));
    } catch {
      // Not this layout.
    }
  }
  return undefined;
}

interface StatsReply {
  memory_stats?: {
    usage?: number;
    limit?: number;
    stats?: Record<string, number>;
  };
}

async function fromEngine(engine: Engine, id: string): Promise<BoxMemory | undefined> {
  try {
    const reply = (await engine.docker
      .getContainer(id)
      .stats({ stream: false, "one-shot": true } as { stream: false })) as StatsReply;
    const m = reply.memory_stats;
    if (m?.usage === undefined) return undefined;
    const inactive = m.stats?.total_inactive_file ?? m.stats?.inactive_file ?? 0;
    return workingSet(m.usage, inactive, m.limit ?? Infinity);
  } catch {
    return undefined;
  }
}

/**
 * Each box's memory now; a box that is gone (or cannot be read) is left out. `cgroupRoot`
 * (default /sys/fs/cgroup) is where cgroups are mounted; where no box is found there, the engine
 * is asked (a remote engine, a rootless one).
 */
export async function boxMemory(
  engine: Engine,
  ids: readonly string[],
  options: { cgroupRoot?: string } = {},
): Promise<Map<string, BoxMemory>> {
  const root = options.cgroupRoot ?? "/sys/fs/cgroup";
  const found = new Map<string, BoxMemory>();
  await Promise.all(
    ids.map(async (id) => {
      const memory = (await fromCgroup(root, id)) ?? (await fromEngine(engine, id));
      if (memory) found.set(id, memory);
    }),
  );
  return found;
}
