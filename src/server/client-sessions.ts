/**
 * Sessions and task stacks scoped by client: each client sees and touches only what it created;
 * another client's session id is answered exactly like an unknown one. A client's default
 * session is created on first use from the server's repository and defaults.
 *
 * A kept session whose server died (`serve --keep-sessions`), or whose client went away while this
 * server keeps sessions, is nobody's here until a client resumes it with the session's secret
 * (given only to the client that created it; the record holds its hash): that client holds it
 * from then on, as if it had created it. Its id alone is not enough, since ids show in logs and
 * listings: naming it without the secret is answered like an unknown session.
 */
import { DEFAULT_LIMITS } from "../sandbox/box-profile.js";
import type { BoxMemory } from "../engine/box-memory.js";
import type { Session, SessionOptions } from "../session/session.js";
import type { SessionManager } from "../session/session-manager.js";
import { readSessionRecord } from "../session/session-record.js";
import { sessionSecretMatches } from "../session/session-secret.js";
import type { StoredTaskStack, TaskStackAccess, TaskStackOpener } from "../tasks/task-stack-access.js";
import type { SessionAccess } from "../tools/session-access.js";
import { InvalidArgumentError, LimitExceededError, SessionNotFoundError } from "../util/errors.js";
import { reportProgress } from "../util/progress-scope.js";
import { forkSession, checkForkCount } from "../session/session-fork.js";
import { admissionFigure, refusal, type AdmissionFigure, type AdmissionInput } from "./admission-figure.js";
import type { MemoryAdmission } from "./memory-admission.js";
import type { BoxSize, ClusterRoom } from "../engine/kubernetes/cluster-room.js";
import { assertWithinGrants, servedRepoRoot } from "./session-request-policy.js";

export interface ServerDefaults {
  repo: string;
  image: string;
  /**
   * The image for a repository's environment (built first when missing); without it every
   * session gets `image`.
   */
  imageFor?: (repo: string, ref: string | undefined, onLine: (line: string) => void) => Promise<string>;
  options: Partial<SessionOptions>;
  /** Repositories (real top directories) a client may name besides `repo` (`--allow-repo`). */
  allowedRepos?: string[];
  /** Sessions all clients may hold at once (`--max-sessions`); default unlimited. */
  maxSessions?: number;
  /** Admits a session only when its box fits in memory beside the boxes there are; default: no check. */
  admission?: MemoryAdmission;
  /**
   * On a cluster: how many more boxes of a size its nodes and the namespace's quotas hold now
   * (cluster-room.ts); a session is admitted only while one more fits. Default: no check.
   */
  clusterRoom?: (box: BoxSize) => Promise<ClusterRoom>;
}

export class ClientSessions implements SessionAccess, TaskStackAccess {
  private readonly owners = new Map<string, string>();
  /** Sessions being created, counted against the limit before they exist. */
  private starting = 0;
  private readonly defaults = new Map<string, Promise<Session>>();
  /** Task stacks with no box, by stack id, and the client that first used each. */
  private readonly stackOwners = new Map<string, string>();

  constructor(
    private readonly manager: SessionManager,
    private readonly stacks: TaskStackOpener,
    private readonly serverDefaults: ServerDefaults,
  ) {}

  async create(clientId: string, options: Partial<SessionOptions>, secretSha256?: string): Promise<Session> {
    const defaults = this.serverDefaults;
    assertWithinGrants(options, defaults.options);
    const served = [defaults.repo, ...(defaults.allowedRepos ?? [])];
    const repo = options.repo === undefined ? defaults.repo : await servedRepoRoot(options.repo, served);
    const memoryMB = options.memoryMB ?? defaults.options.memoryMB;
    const boxes = defaults.admission ? await defaults.admission.boxes() : undefined;
    const room = await this.room(options.cpus, memoryMB);
    // From here to the count going up nothing waits, so sessions asked for at once are counted in turn.
    const input = this.admissionInput(boxes, memoryMB);
    const refused = refusal(admissionFigure(input), input);
    if (refused) throw new LimitExceededError(refused);
    if (room && room.fit - this.starting <= 0) {
      throw new LimitExceededError(
        `no room on the cluster for another session: ${room.why}${this.starting ? `, and ${this.starting} session(s) are starting` : ""}; remove a session you no longer need with session_destroy, ask for a smaller box (memory_mb, cpus), or ask whoever runs the server for more nodes or quota`,
      );
    }
    this.starting++;
    let session: Session;
    try {
      // A fork names its source's image: no environment is looked up or built for it.
      const image =
        options.image ??
        (defaults.imageFor ? await defaults.imageFor(repo, options.ref, reportProgress) : defaults.image);
      session = await this.manager.create(
        {
          ...defaults.options,
          image,
          // A field the client left out keeps the server's setting (--egress, --memory-mb, …).
          ...definedOnly(options),
          repo,
        } as SessionOptions,
        secretSha256,
      );
    } finally {
      this.starting--;
    }
    this.owners.set(session.id, clientId);
    // A client with no default session takes its first one as its default: tools called without
    // session_id then work in the session it made, not in a second box it was never told of.
    if (!this.defaults.has(clientId)) this.defaults.set(clientId, Promise.resolve(session));
    return session;
  }

  /**
   * `n` new sessions of this client from its session `sessionId` (or its default), each from the
   * source's state now or its checkpoint `checkpoint`; refused whole, before any box starts, when
   * fewer than n fit. `secretHashes[i]` is recorded for fork i (see create).
   */
  async fork(
    clientId: string,
    sessionId: string | undefined,
    options: { n: number; checkpoint?: string; signal?: AbortSignal },
    secretHashes: string[] = [],
  ): Promise<Session[]> {
    const n = checkForkCount(options.n);
    const source = await this.resolve(clientId, sessionId);
    const memoryMB = source.box.limits.memoryMB;
    const boxes = this.serverDefaults.admission ? await this.serverDefaults.admission.boxes() : undefined;
    const figure = withRoom(
      admissionFigure(this.admissionInput(boxes, memoryMB)),
      await this.room(source.box.limits.cpus, memoryMB),
      this.starting,
    );
    if (figure.fit < n) {
      throw new LimitExceededError(
        `n: ${n} forks asked for, but ${figure.fit === 0 ? "no more sessions fit" : `only ${figure.fit} more session${figure.fit === 1 ? "" : "s"} fit`} now; nothing was forked. ${figure.why}. Ask for fewer, or remove sessions you no longer need with session_destroy`,
      );
    }
    return forkSession(
      source,
      options,
      (forkOptions, i) => this.create(clientId, forkOptions, secretHashes[i]),
      (session) => this.destroy(clientId, session.id),
    );
  }

  /** How many more sessions fit now and why (for sessions of the server's default memory limit). */
  async admission(): Promise<AdmissionFigure> {
    const boxes = this.serverDefaults.admission ? await this.serverDefaults.admission.boxes() : undefined;
    const memoryMB = this.serverDefaults.options.memoryMB;
    return withRoom(
      admissionFigure(this.admissionInput(boxes, memoryMB)),
      await this.room(undefined, memoryMB),
      this.starting,
    );
  }

  /** The cluster's room for a box of these limits (the server's defaults where undefined), if on a cluster. */
  private room(cpus: number | undefined, memoryMB: number | undefined): Promise<ClusterRoom | undefined> {
    const { clusterRoom, options } = this.serverDefaults;
    if (!clusterRoom) return Promise.resolve(undefined);
    return clusterRoom({
      cpus: cpus ?? options.cpus ?? DEFAULT_LIMITS.cpus,
      memoryMB: memoryMB ?? DEFAULT_LIMITS.memoryMB,
    });
  }

  private admissionInput(boxes: BoxMemory[] | undefined, memoryMB: number | undefined): AdmissionInput {
    const { admission, maxSessions } = this.serverDefaults;
    return {
      // Without a memory check only --max-sessions bounds the figure.
      hostMiB: admission?.hostMiB ?? Infinity,
      reserveMiB: admission?.reserveMiB ?? 0,
      boxes: boxes ?? [],
      starting: this.starting,
      newBoxLimitMiB: memoryMB ?? DEFAULT_LIMITS.memoryMB,
      // Every session this server holds, a kept one no client holds now among them: its box is there.
      held: this.manager.list().length,
      maxSessions,
    };
  }

  async resolve(clientId: string, sessionId: string | undefined): Promise<Session> {
    if (sessionId !== undefined) return this.owned(clientId, sessionId);
    let pending = this.defaults.get(clientId);
    if (pending) {
      const session = await pending.catch(() => undefined);
      if (session && this.manager.has(session.id)) return session;
      if (this.defaults.get(clientId) === pending) this.defaults.delete(clientId);
    }
    pending = this.create(clientId, {});
    this.defaults.set(clientId, pending);
    pending.catch(() => this.defaults.delete(clientId));
    return pending;
  }

  list(clientId: string): Session[] {
    return this.manager.list().filter((s) => this.owners.get(s.id) === clientId);
  }

  async destroy(clientId: string, sessionId: string): Promise<void> {
    this.owned(clientId, sessionId);
    this.owners.delete(sessionId);
    await this.manager.destroy(sessionId);
  }

  /** Removes every session of a client that went away. */
  async closeClient(clientId: string): Promise<void> {
    this.defaults.delete(clientId);
    await Promise.allSettled(this.list(clientId).map((s) => this.destroy(clientId, s.id)));
  }

  /**
   * A client went away and its sessions are kept (`--keep-sessions`): they are nobody's now, and
   * a client that resumes one with its secret holds it, as after a restart. Returns their ids.
   */
  releaseClient(clientId: string): string[] {
    this.defaults.delete(clientId);
    const released = this.list(clientId).map((s) => s.id);
    for (const id of released) this.owners.delete(id);
    return released;
  }

  /**
   * A task stack: a session's (when the id is a live session, it must be the client's), or a
   * stack with no box under any name (the first client to use a name keeps it while this
   * process runs). An omitted id is the client's default stack.
   */
  async open(clientId: string, sessionId: string | undefined): Promise<StoredTaskStack> {
    // stdio has one client: its default stack is "default" and survives restarts. Each HTTP
    // client gets a default of its own.
    const id = sessionId ?? (clientId === "stdio" ? "default" : `default-${clientId.slice(0, 8)}`);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(id)) {
      throw new InvalidArgumentError(
        "session_id",
        "use letters, digits, '.', '_' or '-' (at most 64 characters)",
      );
    }
    if (this.manager.has(id)) {
      this.owned(clientId, id);
    } else if (await readSessionRecord(id)) {
      // A kept session not taken up yet: its stack is its creator's, reached after session_resume.
      throw new SessionNotFoundError(id);
    } else {
      const owner = this.stackOwners.get(id);
      if (owner !== undefined && owner !== clientId) throw new SessionNotFoundError(id);
      this.stackOwners.set(id, clientId);
    }
    return this.stacks.open(id);
  }

  /**
   * Takes up a kept session for the client showing its secret: one this server holds that no
   * client holds now (its client went away), or one left by a drydock that died or stopped (its
   * box is adopted). The secret is checked against the record before any box is touched. Every
   * refusal (unknown id, wrong secret, another client's, not kept) is the same SessionNotFoundError.
   */
  async resume(clientId: string, sessionId: string, secret: string): Promise<Session> {
    const owner = this.owners.get(sessionId);
    if (owner === clientId && this.manager.has(sessionId)) return this.manager.get(sessionId);
    if (owner !== undefined) throw new SessionNotFoundError(sessionId);
    const record = await readSessionRecord(sessionId);
    if (!sessionSecretMatches(secret, record?.secret_sha256)) throw new SessionNotFoundError(sessionId);
    const session = this.manager.has(sessionId)
      ? this.manager.get(sessionId)
      : await this.manager.adopt(sessionId, this.serverDefaults.options);
    // Two clients with the secret at once: the first to get here holds it.
    if (!session || this.owners.has(sessionId)) throw new SessionNotFoundError(sessionId);
    this.owners.set(sessionId, clientId);
    return session;
  }

  private owned(clientId: string, sessionId: string): Session {
    if (this.owners.get(sessionId) !== clientId || !this.manager.has(sessionId)) {
      throw new SessionNotFoundError(sessionId);
    }
    return this.manager.get(sessionId);
  }
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** A figure bound by the cluster's room too, when that is less (sessions starting take room first). */
function withRoom(figure: AdmissionFigure, room: ClusterRoom | undefined, starting: number): AdmissionFigure {
  if (!room) return figure;
  const fit = Math.max(0, room.fit - starting);
  if (fit >= figure.fit) return { ...figure, why: `${figure.why}; on the cluster, ${room.why}` };
  return {
    ...figure,
    fit,
    by: "cluster",
    why: `${room.why}${starting ? `, less ${starting} starting` : ""}`,
  };
}
