/**
 * What a session needs from a container backend, whatever runs the boxes: make one from a
 * ContainerSpec, start it, run programs in it (with and without a terminal), find boxes by label,
 * and remove them. Files move as tar streams on an exec's stdin and stdout, so no file API is
 * needed (the Docker engine's archive API cannot reach tmpfs mounts anyway, and Kubernetes has
 * none). The Docker engine (engine.ts) implements it; docs/kubernetes.md says how a Kubernetes
 * backend would. Building, tagging and pulling images and Docker networks are in ImageEngine,
 * which a backend may leave out.
 */
import type { Readable } from "node:stream";
import type { ContainerSpec } from "./container-spec.js";
import type { TerminalExec, TerminalExecOptions } from "./exec-terminal.js";
import type { ExecOptions, ExecResult } from "./exec.js";

/** A box as a listing shows it. */
export interface BoxSummary {
  id: string;
  name: string;
  labels: Record<string, string>;
  state: string;
  createdAt: Date;
}

/** How a box stands: running, or how it ended. */
export interface BoxState {
  running: boolean;
  /** The box's exit status once it stopped, when the backend knows it. */
  exitCode?: number;
  /** Whether it stopped because it ran out of memory. */
  oomKilled?: boolean;
}

/** An OCI runtime the backend knows, with the arguments it passes it. */
export interface EngineRuntime {
  name: string;
  path: string;
  args: string[];
  /**
   * Whether `args` are the flags the runtime really gets. A cluster's RuntimeClass names a handler
   * whose flags live in each node's runtime configuration, out of the API's sight: false there, and
   * `drydock doctor --engine` probes a box instead.
   */
  argsKnown?: boolean;
}

/** A box id as logs and messages show it: a Docker id cut to 12 hex digits, any other (a Pod's name) whole. */
export const short = (id: string): string => (/^[0-9a-f]{64}$/.test(id) ? id.slice(0, 12) : id);

export interface BoxEngine {
  /** How messages name the backend: a Docker engine's URL, or `kubernetes:NAMESPACE`. */
  readonly name: string;
  /** Makes a box (not started) and returns its id; ImageMissingError when the image is absent. */
  createBox(spec: ContainerSpec): Promise<string>;
  /** Starts a box; one already running is not an error. */
  start(id: string): Promise<void>;
  /** Removes a box and everything in it; a box already gone is not an error. */
  remove(id: string): Promise<void>;
  /** Whether the box exists and runs; a box that is gone is not running. */
  isRunning(id: string): Promise<boolean>;
  /** How the box stands; undefined when it is gone. */
  boxState(id: string): Promise<BoxState | undefined>;
  /**
   * Addresses on drydock's host that boxes' networks route to (Docker's bridge gateways): the
   * egress proxy refuses them as the host's own. A backend whose boxes reach no such address
   * leaves it out.
   */
  networkGateways?(): Promise<string[]>;
  /** Whether the backend answers within timeoutMs (default 5 s). */
  answers(timeoutMs?: number): Promise<boolean>;
  /** The machine a box runs on, for a backend of several (a cluster's node); undefined otherwise. */
  boxNode?(id: string): Promise<string | undefined>;
  /**
   * What all the backend's machines hold together, where a scheduler places boxes across them (a
   * cluster's nodes); leave out where it is capacity().
   */
  totalCapacity?(): Promise<{ cpus: number; memoryMB: number }>;
  /** Boxes carrying a label (any value), or a label with the given value. */
  listBoxes(label: string, value?: string): Promise<BoxSummary[]>;
  /** Runs a program in a box (no shell) and collects its output; BoxGoneError when the box is gone. */
  exec(id: string, argv: string[], options?: ExecOptions): Promise<ExecResult>;
  /** Starts a program in a box on a terminal of its own (the shell, the stderr holder). */
  openTerminal(id: string, argv: string[], options?: TerminalExecOptions): Promise<TerminalExec>;
  /** Whether the backend can start boxes from this image without fetching it. */
  hasImage(ref: string): Promise<boolean>;
  /** What the machine boxes run on has: every box's limits must fit in it. */
  capacity(): Promise<{ cpus: number; memoryMB: number }>;
  /** The runtimes a ContainerSpec may name. */
  runtimes(): Promise<EngineRuntime[]>;
}

/** Images and networks as a Docker engine has them: what image builds and `--network` need. */
export interface ImageEngine {
  imageId(ref: string): Promise<string | undefined>;
  tag(source: string, target: string): Promise<void>;
  pull(ref: string, timeoutMs: number): Promise<void>;
  buildImage(
    context: Readable,
    options: {
      tag: string;
      buildArgs: Record<string, string>;
      labels?: Record<string, string>;
      dockerfile?: string;
      target?: string;
    },
    onLine: (line: string) => void,
  ): Promise<void>;
  hasNetwork(name: string): Promise<boolean>;
}
