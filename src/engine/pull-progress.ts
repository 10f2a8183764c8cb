/**
 * The engine's pull (or push) events as progress lines a person can follow: each layer's steps
 * once, and a download's, extraction's or upload's size at each quarter, not every chunk. Pure.
 */

export interface PullEvent {
  status?: string;
  id?: string;
  progressDetail?: { current?: number; total?: number };
  error?: string;
}

const MB = 1024 * 1024;

export class PullProgress {
  /** The last quarter of each layer's download or extraction already told. */
  private readonly told = new Map<string, number>();

  constructor(
    private readonly ref: string,
    /** The word each line starts with: "pulling", or "pushing" for a push's events. */
    private readonly verb: "pulling" | "pushing" = "pulling",
  ) {}

  /** The line to show for one event, or undefined when it adds nothing. */
  line(event: PullEvent): string | undefined {
    if (event.error) return undefined;
    const status = event.status?.trim();
    if (!status) return undefined;
    const layer = event.id && !/^(Pulling from|Digest:|Status:)/.test(status) ? event.id : undefined;
    if ((status === "Downloading" || status === "Extracting" || status === "Pushing") && layer) {
      const { current = 0, total = 0 } = event.progressDetail ?? {};
      if (total <= 0) return undefined;
      const quarter = Math.min(3, Math.floor((current / total) * 4));
      const key = `${status} ${layer}`;
      if ((this.told.get(key) ?? -1) >= quarter) return undefined;
      this.told.set(key, quarter);
      return `${this.verb} ${this.ref}: layer ${layer}: ${status} ${(current / MB).toFixed(1)} / ${(total / MB).toFixed(1)} MB`;
    }
    if (status === "Waiting" || status === "Verifying Checksum" || status === "Preparing") return undefined;
    return layer
      ? `${this.verb} ${this.ref}: layer ${layer}: ${status}`
      : `${this.verb} ${this.ref}: ${status}`;
  }
}
