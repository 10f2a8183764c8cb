/**
 * What the host knows of a session's checkpoints: names, the commit each is in the box, sizes,
 * ages, and the shell's state. The names are the client's, checked here; the box only ever sees
 * a slot drydock made. The book is kept in the state directory (one small JSON file per session,
 * beside its record), so `drydock sessions checkpoint|restore|fork` in another process see the
 * same checkpoints as the server.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { stateDir } from "../util/paths.js";
import { InvalidArgumentError, LimitExceededError, NotFoundError } from "../util/errors.js";
import type { ShellState } from "./shell-state.js";

/** Checkpoints a session may hold at once, unless the server says otherwise. */
export const DEFAULT_MAX_CHECKPOINTS = 20;
/** Bytes one checkpoint may hold (changed files, index, refs), unless the server says otherwise. */
export const DEFAULT_CHECKPOINT_MAX_BYTES = 256 * 1024 * 1024;

export interface CheckpointLimits {
  maxCheckpoints: number;
  maxBytes: number;
}

export interface CheckpointEntry {
  name: string;
  message?: string;
  slot: string;
  commit: string;
  bytes: number;
  files: number;
  includeIgnored: boolean;
  createdAt: Date;
  /** Absent when saved by `drydock sessions checkpoint` (another process cannot reach the shell). */
  shell?: ShellState;
}

export interface CheckpointListing {
  name: string;
  message?: string;
  created_at: string;
  age_s: number;
  bytes: number;
  changed_files: number;
  include_ignored: boolean;
  /** The shell's working directory when it was saved (absent: the shell was not saved). */
  cwd?: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Throws naming `field` unless `name` is a checkpoint name: letters, digits, . _ -, at most 64. */
export function checkCheckpointName(name: string, field = "name"): string {
  if (!NAME.test(name) || name.includes("..")) {
    const shown = JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
    throw new InvalidArgumentError(
      field,
      `${shown} is not a checkpoint name; use letters, digits, '.', '_' or '-' (at most 64 characters, starting with a letter or digit, no '..')`,
    );
  }
  return name;
}

/** A slot for the box's refs: drydock's own, never derived from a client's name. */
export function newCheckpointSlot(): string {
  return randomBytes(8).toString("hex");
}

/** Where a session's book is kept. */
export function checkpointBookPath(sessionId: string, state: string = stateDir()): string {
  return join(state, "checkpoints", `${sessionId}.json`);
}

/** Removes a session's book (with its box its checkpoints are gone). */
export function removeCheckpointBook(sessionId: string, state: string = stateDir()): void {
  if (/^[0-9a-f]{12}$/.test(sessionId)) rmSync(checkpointBookPath(sessionId, state), { force: true });
}

interface StoredEntry extends Omit<CheckpointEntry, "createdAt"> {
  createdAt: string;
}

export class CheckpointBook {
  private entries = new Map<string, CheckpointEntry>();

  /** `file`: where the book is kept; each read loads it, each change writes it. */
  constructor(
    readonly limits: CheckpointLimits,
    private readonly file?: string,
  ) {
    this.load();
  }

  private load(): void {
    if (this.file === undefined) return;
    let stored: StoredEntry[];
    try {
      stored = JSON.parse(readFileSync(this.file, "utf8")) as StoredEntry[];
    } catch {
      return;
    }
    if (!Array.isArray(stored)) return;
    this.entries = new Map(stored.map((e) => [e.name, { ...e, createdAt: new Date(e.createdAt) }]));
  }

  private save(): void {
    if (this.file === undefined) return;
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const stored: StoredEntry[] = [...this.entries.values()].map((e) => ({
      ...e,
      createdAt: e.createdAt.toISOString(),
    }));
    const partial = `${this.file}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify(stored) + "\n", { mode: 0o600 });
    renameSync(partial, this.file);
  }

  get size(): number {
    this.load();
    return this.entries.size;
  }

  /** The entry called `name`, or NotFoundError naming what there is. */
  get(name: string, field = "name"): CheckpointEntry {
    checkCheckpointName(name, field);
    this.load();
    const entry = this.entries.get(name);
    if (!entry) {
      const known = [...this.entries.keys()];
      throw new NotFoundError(
        `${field}: no checkpoint named ${JSON.stringify(name)} in this session; ${known.length ? `it has ${known.map((n) => JSON.stringify(n)).join(", ")}` : "it has none; take one with session_checkpoint"}`,
      );
    }
    return entry;
  }

  /**
   * Throws unless a checkpoint `name` may be saved now: a new name within the count, or an
   * existing one (replaced). Returns the entry it replaces, if any.
   */
  admit(name: string): CheckpointEntry | undefined {
    checkCheckpointName(name);
    this.load();
    const existing = this.entries.get(name);
    if (!existing && this.entries.size >= this.limits.maxCheckpoints) {
      throw new LimitExceededError(
        `this session holds ${this.entries.size} checkpoints, the most it may (${this.limits.maxCheckpoints}); nothing was saved. Save under an existing name to replace it (session_checkpoints lists them), or ask the operator for a larger --max-checkpoints`,
      );
    }
    return existing;
  }

  set(entry: CheckpointEntry): void {
    this.load();
    this.entries.set(entry.name, entry);
    this.save();
  }

  list(now = Date.now()): CheckpointListing[] {
    this.load();
    return [...this.entries.values()]
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .map((e) => ({
        name: e.name,
        ...(e.message === undefined ? {} : { message: e.message }),
        created_at: e.createdAt.toISOString(),
        age_s: Math.max(0, Math.round((now - e.createdAt.getTime()) / 1000)),
        bytes: e.bytes,
        changed_files: e.files,
        include_ignored: e.includeIgnored,
        ...(e.shell === undefined ? {} : { cwd: Buffer.from(e.shell.cwd, "base64").toString("utf8") }),
      }));
  }
}
