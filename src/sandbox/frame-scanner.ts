/**
 * Finds the frame a command's output is wrapped in. Each command gets a fresh random nonce for
 * its end, so a command cannot end its own frame early by printing marker text it does not know.
 */
export const RS = "\x1e";

export function startMarker(nonce: string): string {
  return `${RS}DDS${nonce}${RS}`;
}

/** Printed once the shell is idle again after a command: terminal reset, state saved. */
export function readyMarker(nonce: string): string {
  return `${RS}DDK${nonce}${RS}`;
}

export function endMarkerPattern(nonce: string): RegExp {
  return new RegExp(`${RS}DDE${nonce}:(\\d+)${RS}`);
}

/** The longest an end marker can be: the carry kept between chunks so a split marker is found. */
export function endMarkerMaxLength(nonce: string): number {
  return `${RS}DDE${nonce}:255${RS}`.length;
}

/** `rest`: what followed the end marker in the text fed (the frame's own work after the command). */
export type ScanEvent = { kind: "output"; text: string } | { kind: "end"; exitCode: number; rest: string };

/**
 * Feeds terminal text in, gets output and the end out. Text before the start marker (echo of what
 * was typed, output of earlier background jobs) is dropped.
 */
export class FrameScanner {
  private seenStart = false;
  private carry = "";
  private readonly start: string;
  private readonly end: RegExp;
  private readonly keep: number;

  /**
   * `nonce` names the end, `startId` the start (by default the nonce too); with startId null
   * there is no start marker: everything fed is the command's until the end.
   */
  constructor(nonce: string, startId: string | null = nonce) {
    this.seenStart = startId === null;
    this.start = startMarker(startId ?? nonce);
    this.end = endMarkerPattern(nonce);
    this.keep = Math.max(this.start.length, endMarkerMaxLength(nonce));
  }

  feed(text: string): ScanEvent[] {
    const events: ScanEvent[] = [];
    let buffer = this.carry + text;
    this.carry = "";
    if (!this.seenStart) {
      const at = buffer.indexOf(this.start);
      if (at < 0) {
        this.carry = buffer.slice(-this.keep);
        return events;
      }
      this.seenStart = true;
      buffer = buffer.slice(at + this.start.length);
    }
    const match = this.end.exec(buffer);
    if (match) {
      if (match.index > 0) events.push({ kind: "output", text: buffer.slice(0, match.index) });
      events.push({
        kind: "end",
        exitCode: Number(match[1]),
        rest: buffer.slice(match.index + match[0].length),
      });
      return events;
    }
    // Hold back a tail that could be the beginning of a split end marker.
    const safe = Math.max(0, buffer.length - this.keep);
    const lastRs = buffer.lastIndexOf(RS);
    const cut = lastRs >= safe ? lastRs : buffer.length;
    if (cut > 0) events.push({ kind: "output", text: buffer.slice(0, cut) });
    this.carry = buffer.slice(cut);
    return events;
  }
}
