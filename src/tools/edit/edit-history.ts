import { NotFoundError } from "../../util/errors.js";

/** What a file held before an edit; null when the edit created it (undo then deletes it). */
export type PreviousContent = string | null;

/** Bounds on what the history keeps; defaults 10 steps per file and 32 Mi characters in all. */
export interface EditHistoryLimits {
  readonly maxEntriesPerFile?: number;
  readonly maxTotalChars?: number;
}

interface Entry {
  readonly before: PreviousContent;
  readonly seq: number;
}

/**
 * The undo stacks of one session: per file, the contents before each edit, newest last. When the
 * bounds are hit the oldest steps (of any file) go first. Holds values only; no I/O.
 */
export class EditHistory {
  private readonly stacks = new Map<string, Entry[]>();
  private readonly maxEntriesPerFile: number;
  private readonly maxTotalChars: number;
  private totalChars = 0;
  private nextSeq = 0;

  constructor(limits: EditHistoryLimits = {}) {
    this.maxEntriesPerFile = limits.maxEntriesPerFile ?? 10;
    this.maxTotalChars = limits.maxTotalChars ?? 32 * 1024 * 1024;
  }

  /**
   * Records what `path` held before an edit. Returns false when that content alone is over the
   * size bound: the file's history is then cleared, because undoing past the unrecorded step
   * would silently skip it.
   */
  push(path: string, before: PreviousContent): boolean {
    const size = before?.length ?? 0;
    if (size > this.maxTotalChars) {
      this.clear(path);
      return false;
    }
    const stack = this.stacks.get(path) ?? [];
    stack.push({ before, seq: this.nextSeq++ });
    this.stacks.set(path, stack);
    this.totalChars += size;
    if (stack.length > this.maxEntriesPerFile) this.dropOldestOf(path);
    while (this.totalChars > this.maxTotalChars) this.dropOldest();
    return true;
  }

  /** Takes the content `path` held before its last recorded edit; throws when there is none. */
  pop(path: string): PreviousContent {
    const stack = this.stacks.get(path);
    const entry = stack?.pop();
    if (stack === undefined || entry === undefined) {
      throw new NotFoundError(
        `nothing to undo for ${path}: no edit of it made with this tool is recorded in this session (history keeps the last ${this.maxEntriesPerFile} edits per file). Use git_diff to see changes, or edit the file directly`,
      );
    }
    if (stack.length === 0) this.stacks.delete(path);
    this.totalChars -= entry.before?.length ?? 0;
    return entry.before;
  }

  /** How many undo steps `path` has. */
  depth(path: string): number {
    return this.stacks.get(path)?.length ?? 0;
  }

  /** Forgets the history of `path` (when something else rewrote the file, for instance). */
  clear(path: string): void {
    for (const entry of this.stacks.get(path) ?? []) this.totalChars -= entry.before?.length ?? 0;
    this.stacks.delete(path);
  }

  /** Characters of content held across all files. */
  get heldChars(): number {
    return this.totalChars;
  }

  private dropOldestOf(path: string): void {
    const stack = this.stacks.get(path);
    const entry = stack?.shift();
    if (stack === undefined || entry === undefined) return;
    this.totalChars -= entry.before?.length ?? 0;
    if (stack.length === 0) this.stacks.delete(path);
  }

  private dropOldest(): void {
    let oldestPath: string | undefined;
    let oldestSeq = Infinity;
    for (const [path, stack] of this.stacks) {
      const seq = stack[0]?.seq ?? Infinity;
      if (seq < oldestSeq) {
        oldestSeq = seq;
        oldestPath = path;
      }
    }
    if (oldestPath === undefined) {
      this.totalChars = 0;
      return;
    }
    this.dropOldestOf(oldestPath);
  }
}
