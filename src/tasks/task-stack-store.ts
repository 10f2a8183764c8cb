import { randomBytes } from "node:crypto";
import { copyFile, link, mkdir, open, readdir, readFile, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { describeError, InvalidArgumentError, TaskStackError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { stateDir } from "../util/paths.js";
import { SerialQueue } from "./serial-queue.js";
import { stackOverview } from "./stack-overview.js";
import type { StoredTaskStack, TaskStackOpener } from "./task-stack-access.js";
import { decodeTaskStackFile, encodeTaskStackFile, type DecodedTaskStackFile } from "./task-stack-file.js";
import type { TaskStackState } from "./task-stack-state.js";
import { TaskStack, type TaskStackOptions, type TaskStackView } from "./task-stack.js";

export interface TaskStackStoreOptions {
  /** One JSON file per session lives here; default `<stateDir()>/tasks`. */
  dir?: string;
  /** Clock and limits for every stack the store opens. */
  stack?: TaskStackOptions;
  /** Where warnings about damaged files go; default the "tasks" logger on stderr. */
  warn?: (message: string) => void;
}

/** A stored stack read without being opened for changes (what `drydock tasks` shows). */
export interface PeekedTaskStack {
  readonly sessionId: string;
  readonly stack: TaskStackView;
  readonly savedAt: string;
  /** Set when the main file was damaged and this is the backup's older state. */
  readonly warning?: string;
}

export interface StoredStackSummary {
  readonly sessionId: string;
  readonly savedAt?: string;
  readonly tasks?: number;
  readonly open?: number;
  readonly currentTitle?: string | null;
  /** Why the stack could not be read, when it could not. */
  readonly problem?: string;
}

type Loaded =
  | { kind: "none" }
  | { kind: "main"; state: TaskStackState; savedAt: string }
  | { kind: "backup"; state: TaskStackState; savedAt: string; damage: string };

const maxSessionIdChars = 128;
const staleTempMs = 60_000;

/**
 * Keeps each session's task stack as a JSON file, saved atomically after every change (temp file,
 * fsync, rename) with the previous good file kept as `.bak`. A damaged file is reported and the
 * backup used; changes to one stack are serialized.
 */
export class TaskStackStore implements TaskStackOpener {
  readonly dir: string;
  private readonly warn: (message: string) => void;
  private readonly stacks = new Map<string, Promise<StoredStack>>();

  constructor(private readonly options: TaskStackStoreOptions = {}) {
    this.dir = options.dir ?? join(stateDir(), "tasks");
    const log = logger("tasks");
    this.warn = options.warn ?? ((message) => log.warn(message));
  }

  /** The session's stack, loaded once and shared by every caller; empty if none is stored yet. */
  open(sessionId: string): Promise<StoredTaskStack> {
    try {
      checkSessionId(sessionId);
    } catch (error) {
      return Promise.reject(error);
    }
    let stack = this.stacks.get(sessionId);
    if (!stack) {
      stack = this.load(sessionId);
      this.stacks.set(sessionId, stack);
      // A failed load is not cached: the next open tries again (say, after the file was fixed).
      stack.catch(() => this.stacks.delete(sessionId));
    }
    return stack;
  }

  /** Reads a stored stack without opening it for changes or repairing anything; undefined if none. */
  async peek(sessionId: string): Promise<PeekedTaskStack | undefined> {
    checkSessionId(sessionId);
    const loaded = await this.read(sessionId);
    if (loaded.kind === "none") return undefined;
    return {
      sessionId,
      stack: TaskStack.fromState(loaded.state, this.options.stack),
      savedAt: loaded.savedAt,
      warning: loaded.kind === "backup" ? this.backupWarning(sessionId, loaded) : undefined,
    };
  }

  /** Every session with a stored stack, sorted by id; a damaged one is listed with its problem. */
  async list(): Promise<StoredStackSummary[]> {
    const names = await readdir(this.dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [];
      throw error;
    });
    const sessionIds = names.flatMap((name) => {
      const id = name.endsWith(".json") ? decodeSessionId(name.slice(0, -".json".length)) : undefined;
      return id === undefined ? [] : [id];
    });
    const summaries = await Promise.all(sessionIds.sort().map((id) => this.summarize(id)));
    return summaries.filter((s): s is StoredStackSummary => s !== undefined);
  }

  private async summarize(sessionId: string): Promise<StoredStackSummary | undefined> {
    try {
      const peeked = await this.peek(sessionId);
      if (!peeked) return undefined;
      const { counts } = stackOverview(peeked.stack);
      return {
        sessionId,
        savedAt: peeked.savedAt,
        tasks: counts.total,
        open: counts.open,
        currentTitle: peeked.stack.currentTask()?.title ?? null,
        problem: peeked.warning,
      };
    } catch (error) {
      return { sessionId, problem: describeError(error) };
    }
  }

  private async load(sessionId: string): Promise<StoredStack> {
    await this.removeStaleTemps(sessionId);
    const loaded = await this.read(sessionId);
    const paths = this.paths(sessionId);
    if (loaded.kind === "none") {
      // A backup without its main file is left from a stack someone deleted: never restore it.
      await unlink(paths.backup).catch(() => undefined);
      return new StoredStack(sessionId, TaskStack.empty(this.options.stack), (state) =>
        this.save(sessionId, state),
      );
    }
    if (loaded.kind === "backup") {
      // Keep the damaged file for inspection; the backup stays as the last good state.
      const aside = `${paths.main}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      await rename(paths.main, aside);
      this.warn(`${this.backupWarning(sessionId, loaded)}; the damaged file was moved to ${aside}`);
    }
    const stack = TaskStack.fromState(loaded.state, this.options.stack);
    return new StoredStack(sessionId, stack, (state) => this.save(sessionId, state));
  }

  private async read(sessionId: string): Promise<Loaded> {
    const paths = this.paths(sessionId);
    const main = await readStackFile(paths.main, sessionId);
    if (main === undefined) return { kind: "none" };
    if (main.ok) return { kind: "main", state: main.state, savedAt: main.savedAt };
    const backup = await readStackFile(paths.backup, sessionId);
    if (backup?.ok)
      return { kind: "backup", state: backup.state, savedAt: backup.savedAt, damage: main.problem };
    const backupNote =
      backup === undefined ? "there is no backup" : `the backup is damaged too (${backup.problem})`;
    throw new TaskStackError(
      "task_stack_damaged",
      `the task stack of session ${sessionId} cannot be read: ${paths.main} is damaged (${main.problem}) and ${backupNote}. Nothing was changed; move ${paths.main} aside to start this session with an empty stack`,
    );
  }

  private backupWarning(sessionId: string, loaded: Extract<Loaded, { kind: "backup" }>): string {
    return `task stack file of session ${sessionId} is damaged (${loaded.damage}); using the last good state from its backup, saved at ${loaded.savedAt}`;
  }

  private async save(sessionId: string, state: TaskStackState): Promise<void> {
    const paths = this.paths(sessionId);
    const temp = `${paths.main}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const handle = await open(temp, "wx", 0o600);
      try {
        await handle.writeFile(encodeTaskStackFile(sessionId, state, new Date()));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.keepBackup(paths);
      await rename(temp, paths.main);
      await syncDirectory(this.dir);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw new TaskStackError(
        "task_stack_save_failed",
        `could not save the task stack of session ${sessionId} to ${paths.main} (${describeError(error)}); the change was not applied. Check free space and permissions of ${this.dir}`,
        { cause: error },
      );
    }
  }

  /** The file about to be replaced becomes the backup (a hard link, so the main file never goes missing). */
  private async keepBackup(paths: { main: string; backup: string }): Promise<void> {
    const staging = `${paths.backup}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
    // No main file yet (a new stack, or a damaged one moved aside): the backup stays as it is.
    if (!(await linkOrCopy(paths.main, staging))) return;
    await rename(staging, paths.backup);
  }

  private async removeStaleTemps(sessionId: string): Promise<void> {
    const prefix = encodeSessionId(sessionId) + ".json.";
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.startsWith(prefix) || !name.endsWith(".tmp")) continue;
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => undefined);
      // A recent one may belong to a save still under way in another process.
      if (info && Date.now() - info.mtimeMs > staleTempMs) await unlink(path).catch(() => undefined);
    }
  }

  private paths(sessionId: string): { main: string; backup: string } {
    const main = join(this.dir, encodeSessionId(sessionId) + ".json");
    return { main, backup: `${main}.bak` };
  }
}

/** One opened stack: readers see the last saved state, changes run one at a time and are saved. */
class StoredStack implements StoredTaskStack {
  private readonly queue = new SerialQueue();

  constructor(
    readonly sessionId: string,
    private committed: TaskStack,
    private readonly save: (state: TaskStackState) => Promise<void>,
  ) {}

  read<T>(fn: (stack: TaskStackView) => T): T {
    return fn(this.committed);
  }

  mutate<T>(fn: (stack: TaskStack) => T): Promise<T> {
    return this.queue.run(async () => {
      const draft = this.committed.clone();
      const result = fn(draft);
      await this.save(draft.toState());
      this.committed = draft;
      return result;
    });
  }
}

async function readStackFile(path: string, sessionId: string): Promise<DecodedTaskStackFile | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return { ok: false, problem: describeError(error) };
  }
  const decoded = decodeTaskStackFile(text);
  if (decoded.ok && decoded.sessionId !== sessionId) {
    return { ok: false, problem: `it belongs to session ${decoded.sessionId}` };
  }
  return decoded;
}

/** Hard-links `from` to `to`, or copies it where links are not supported; false if `from` is missing. */
async function linkOrCopy(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
  }
  try {
    await copyFile(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Not every platform can fsync a directory; the rename itself is still atomic.
  }
}

function checkSessionId(sessionId: string): void {
  if (sessionId.length === 0 || sessionId.length > maxSessionIdChars || /\p{Cc}/u.test(sessionId)) {
    throw new InvalidArgumentError(
      "session_id",
      `must be 1 to ${maxSessionIdChars} printable characters; list sessions with session_list`,
    );
  }
}

/** File names hold the session id percent-encoded: no id can name a path outside the directory. */
function encodeSessionId(sessionId: string): string {
  return encodeURIComponent(sessionId).replace(/\./g, "%2E");
}

function decodeSessionId(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}
