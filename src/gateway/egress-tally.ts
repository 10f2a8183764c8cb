/** A session's egress counts, in total and per target, for session tools and logs. Pure. */

export type EgressOutcome = "allowed" | "refused" | "failed";

export interface EgressHostCount {
  host: string;
  port: number;
  allowed: number;
  refused: number;
  /** Allowed, but the host could not be reached from the host. */
  failed: number;
  bytes_up: number;
  bytes_down: number;
}

export interface EgressReport {
  /** The rules in force: hosts, `*.domain` patterns and IP literals; empty when nothing may leave. */
  allowlist: string[];
  connections: { allowed: number; refused: number; failed: number };
  /** Bytes from the box to the hosts, and back. */
  bytes_up: number;
  bytes_down: number;
  /** Per target, in the order first seen (at most MAX_HOSTS; the totals count every one). */
  hosts: EgressHostCount[];
}

/** Distinct targets kept per session: a box trying names at random cannot grow the host's memory. */
export const MAX_HOSTS = 100;

export class EgressTally {
  private readonly totals = { allowed: 0, refused: 0, failed: 0, bytesUp: 0, bytesDown: 0 };
  private readonly hosts = new Map<string, EgressHostCount>();

  constructor(readonly allowlist: readonly string[]) {}

  record(host: string, port: number, outcome: EgressOutcome, bytesUp = 0, bytesDown = 0): void {
    this.totals[outcome]++;
    this.totals.bytesUp += bytesUp;
    this.totals.bytesDown += bytesDown;
    const key = `${host}:${port}`;
    let entry = this.hosts.get(key);
    if (!entry) {
      if (this.hosts.size >= MAX_HOSTS) return;
      entry = { host, port, allowed: 0, refused: 0, failed: 0, bytes_up: 0, bytes_down: 0 };
      this.hosts.set(key, entry);
    }
    entry[outcome]++;
    entry.bytes_up += bytesUp;
    entry.bytes_down += bytesDown;
  }

  report(): EgressReport {
    return {
      allowlist: [...this.allowlist],
      connections: {
        allowed: this.totals.allowed,
        refused: this.totals.refused,
        failed: this.totals.failed,
      },
      bytes_up: this.totals.bytesUp,
      bytes_down: this.totals.bytesDown,
      hosts: [...this.hosts.values()].map((h) => ({ ...h })),
    };
  }
}

/** The report of a session that may reach nothing. */
export function noEgressReport(): EgressReport {
  return new EgressTally([]).report();
}
