// Host memory, as the kernel sees it: proportional set sizes of processes and of a box's engine-side
// helper (containerd-shim), and the memory a box's cgroup holds (its processes and its tmpfs).
import { readFileSync, readdirSync } from "node:fs";

function statusKb(pid, field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Proportional set size (kB): shared pages (a program's text, run 20 times) counted once in all. */
function pssKb(pid) {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    if (m) return Number(m[1]);
  } catch {
    // No smaps_rollup (old kernel, process gone): resident size instead.
  }
  return statusKb(pid, "VmRSS");
}

function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return 0;
  }
}

function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return [];
  }
}

const pids = () => readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map(Number);

/** A process and all its descendants. */
export function processTree(root = process.pid) {
  const children = new Map();
  for (const pid of pids()) {
    const parent = parentOf(pid);
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(pid);
  }
  const tree = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    tree.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** Memory (MiB, proportional set size) of a process and all its descendants. */
export function treePssMiB(root = process.pid) {
  return processTree(root).reduce((kb, pid) => kb + pssKb(pid), 0) / 1024;
}

/** Resident set size (MiB) of a process and all its descendants: shared pages counted in each. */
export function treeRssMiB(root = process.pid) {
  return processTree(root).reduce((kb, pid) => kb + statusKb(pid, "VmRSS"), 0) / 1024;
}

/** Memory (MiB, proportional set size) of the containerd-shim processes serving these container ids. */
export function shimRssMiB(containerIds) {
  const wanted = new Set(containerIds);
  let kb = 0;
  for (const pid of pids()) {
    const args = cmdline(pid);
    if (!args[0]?.includes("containerd-shim")) continue;
    const at = args.indexOf("-id");
    if (at >= 0 && wanted.has(args[at + 1])) kb += pssKb(pid);
  }
  return kb / 1024;
}

/** Memory (MiB) charged to a container's cgroup: its processes and its tmpfs pages. */
export function cgroupMiB(containerId) {
  for (const path of [
    `/sys/fs/cgroup/memory/docker/${containerId}/memory.usage_in_bytes`,
    `/sys/fs/cgroup/system.slice/docker-${containerId}.scope/memory.current`,
  ]) {
    try {
      return Number(readFileSync(path, "utf8")) / 2 ** 20;
    } catch {
      // Try the other cgroup layout.
    }
  }
  return NaN;
}

/** Memory in use on the whole host (MiB): MemTotal - MemAvailable. */
export function hostUsedMiB() {
  const info = readFileSync("/proc/meminfo", "utf8");
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(info)?.[1] ?? 0);
  return (kb("MemTotal") - kb("MemAvailable")) / 1024;
}

/** Samples `fn` every `everyMs` until stopped; returns { stop(): max }. */
export function sampleMax(fn, everyMs = 100) {
  let max = fn();
  const timer = setInterval(() => {
    max = Math.max(max, fn());
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(max, fn());
    },
  };
}
