/**
 * The Kubernetes backend: a box is a Pod (pod-manifest.ts) plus its NetworkPolicy
 * (network-policy.ts), owned by this process's Lease (owner-lease.ts); programs run through the
 * Pod's exec subresource over WebSocket (kube-exec.ts, kube-terminal.ts), so files still move as
 * tar streams on an exec's stdin and stdout. Listing is by label, capacity comes from the nodes,
 * runtimes from RuntimeClasses. docs/kubernetes.md maps each BoxEngine method to the API.
 *
 * What Kubernetes has no field for is done here: the open-files limit is lowered in every exec
 * (`ulimit -n`, which a process may lower and not raise again), and under gVisor a terminal goes
 * through `script` as on Docker (runtime-terminal.ts). The process limit: the node's podPidsLimit
 * caps a runc box's cgroup, but a gVisor box's processes live inside its sandbox, where that
 * cgroup counts only gVisor's own threads (a fork bomb ends the sandbox as a whole). There every
 * exec also sets `ulimit -u` to the box's limit (ContainerSpec.processLimit), which gVisor counts
 * per user in the sandbox (the box's one user): a fork bomb is refused and the box goes on. Under
 * runc the same limit would count every uid-1000 process of the node, so it is not set there.
 */
import {
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  NetworkingV1Api,
  NodeV1Api,
  type V1Node,
  type V1Pod,
} from "@kubernetes/client-node";
import { DrydockError, ImageMissingError, InvalidArgumentError } from "../../util/errors.js";
import { logger } from "../../util/log.js";
import { clusterImageMissing } from "./cluster-image.js";
import { clusterRoom, type BoxSize, type ClusterRoom } from "./cluster-room.js";
import { RegistryPins } from "./registry-pins.js";
import { nodesCapacity, nodesHaveImage, readyNodes, runLoader } from "./cluster-nodes.js";
import type { BoxEngine, BoxState, BoxSummary, EngineRuntime } from "../box-engine.js";
import type { ContainerSpec } from "../container-spec.js";
import type { TerminalExec, TerminalExecOptions } from "../exec-terminal.js";
import type { ExecOptions, ExecResult } from "../exec.js";
import { currentOwner, formatOwner } from "../labels.js";
import { terminalArgv } from "../runtime-terminal.js";
import { apiMessage, apiStatusOf, kubeApiError } from "./kube-api-error.js";
import { kubeExec, type PodTarget } from "./kube-exec.js";
import { kubeTerminal } from "./kube-terminal.js";
import { boxLabelsOf, labelSelectorValue } from "./kubernetes-metadata.js";
import type { KubernetesTarget } from "./kubernetes-target.js";
import { namespaceDenyAll, networkPolicyFor } from "./network-policy.js";
import { isolationRefusal, probeIsolation, type IsolationVerdict } from "./network-probe.js";
import { OwnerLease, reapExpiredLeases } from "./owner-lease.js";
import { ANNOTATION_NOFILE, ANNOTATION_PROCESSES, BOX_CONTAINER, podFor } from "./pod-manifest.js";

const log = logger("kubernetes");

/** How long start() waits for a Pod's box container to run (scheduling, image, sandbox). */
const START_TIMEOUT_MS = 180_000;
/** Waiting reasons that mean the node cannot get the image. */
const IMAGE_REASONS = new Set(["ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName"]);

export interface KubernetesEngineOptions {
  /**
   * A command that puts a local Docker image on every node (`kind load docker-image`,
   * `k3d image import`, the test cluster's `scripts/kube/cluster.sh load`): run with the image as
   * its last argument, no shell, when a node lacks an image drydock needs. Default none: images
   * must be on the nodes (pushed to their registry) before drydock starts.
   */
  loadImage?: string[];
  /** Ask for the runtime's default AppArmor profile (nodes without AppArmor refuse such Pods); default true. */
  appArmor?: boolean;
  /** Seconds after which Kubernetes ends a box whatever happens to drydock; default none. */
  activeDeadlineSeconds?: number;
  /**
   * The image the NetworkPolicy probe runs: one whose programs drydock trusts (the sandbox
   * image), since the probe's verdict is what they answer. Default: the first box's image, unless
   * it is an environment image (built from a repository's definition, whose `bash` or `timeout`
   * could say "not reached" whatever happened): then no box is made until this is given.
   */
  probeImage?: string;
  /** Secrets in the namespace the kubelet pulls box images with (imagePullSecrets); default none. */
  pullSecrets?: readonly string[];
}

/** What every exec in a box needs to know of it. */
interface BoxInfo {
  nofile: number;
  /** RLIMIT_NPROC for every exec, where the runtime counts the box's processes itself; 0: none. */
  processes: number;
  runtime?: string;
}

/**
 * The isolation verdict of each namespace (by API server and namespace) this process has probed.
 * A pass holds for the life of the process; a refusal is probed again at the first box asked for
 * REPROBE_REFUSED_MS after it, so a cluster fixed meanwhile is not refused by a stale verdict.
 */
const verdicts = new Map<string, { verdict: Promise<IsolationVerdict>; at: number }>();
const REPROBE_REFUSED_MS = 60_000;
/** An environment image (environment-images.ts names them): built from a repository's definition. */
const isEnvironmentImage = (image: string): boolean => /(^|\/)drydock-env(-base)?(:|@|$)/.test(image);
/** A probe Pod ends by itself after this, should drydock die mid-probe with its Lease still live. */
const PROBE_DEADLINE_SECONDS = 300;

export class KubernetesEngine implements BoxEngine {
  /** Each box's open-files limit and runtime, as made or as read once from its Pod. */
  private readonly boxes = new Map<string, BoxInfo>();
  private runtimeClasses: Promise<Record<string, string>> | undefined;
  /** The serving drydock's sandbox image, which the probe runs when probe-image= names none. */
  private serverImage: string | undefined;
  /** Readings of the cluster's room under way, by box size (room). */
  private readonly roomReadings = new Map<string, Promise<ClusterRoom>>();
  /** Whether drydock may list Pods of every namespace; undefined until tried. */
  private listsAllPods: boolean | undefined;
  /** The registry digests Pods name images by. */
  private readonly pins = new RegistryPins();

  private constructor(
    readonly name: string,
    readonly namespace: string,
    private readonly kc: KubeConfig,
    private readonly core: CoreV1Api,
    private readonly networking: NetworkingV1Api,
    private readonly coordination: CoordinationV1Api,
    private readonly nodeApi: NodeV1Api,
    private readonly lease: OwnerLease,
    private readonly options: KubernetesEngineOptions,
  ) {}

  /**
   * Loads the kubeconfig, makes the namespace's deny-all NetworkPolicy if it lacks one (which
   * also finds a namespace that does not exist), deletes Leases of dead drydocks, and takes this
   * process's Lease. Everything it reads and writes is in the namespace: no cluster-wide
   * permission is needed (docs/kubernetes.md, "What the namespace needs").
   */
  static async connect(
    target: KubernetesTarget,
    options: KubernetesEngineOptions = {},
  ): Promise<KubernetesEngine> {
    const kc = new KubeConfig();
    try {
      if (target.kubeconfig) kc.loadFromFile(target.kubeconfig);
      else kc.loadFromDefault();
      if (target.context) kc.setCurrentContext(target.context);
    } catch (error) {
      throw new InvalidArgumentError(
        "--engine",
        `${target.name}: cannot load the kubeconfig (${(error as Error).message}); give kubeconfig=PATH or set KUBECONFIG`,
      );
    }
    if (target.context && !kc.getContexts().some((c) => c.name === target.context)) {
      throw new InvalidArgumentError(
        "--engine",
        `${target.name}: the kubeconfig has no context ${JSON.stringify(target.context)} (it has: ${kc
          .getContexts()
          .map((c) => c.name)
          .join(", ")})`,
      );
    }
    const core = kc.makeApiClient(CoreV1Api);
    const networking = kc.makeApiClient(NetworkingV1Api);
    const coordination = kc.makeApiClient(CoordinationV1Api);
    const nodeApi = kc.makeApiClient(NodeV1Api);
    const ns = target.namespace;
    const policy = namespaceDenyAll(ns);
    try {
      await networking.readNamespacedNetworkPolicy({ name: policy.metadata.name, namespace: ns });
    } catch (error) {
      if (apiStatusOf(error) !== 404)
        throw kubeApiError(target.name, `read NetworkPolicy ${policy.metadata.name}`, error);
      try {
        await networking.createNamespacedNetworkPolicy({ namespace: ns, body: policy as never });
      } catch (made) {
        // Reading a missing object in a missing namespace says 404 too; making one says which.
        if (apiStatusOf(made) === 404) {
          throw new InvalidArgumentError(
            "--engine",
            `${target.name}: the namespace ${ns} does not exist; create it (kubectl create namespace ${ns}) and see docs/kubernetes.md for the RBAC drydock needs there (the API said: ${apiMessage(made)})`,
          );
        }
        throw kubeApiError(target.name, "make the namespace's deny-all NetworkPolicy", made);
      }
      log.info(`${target.name}: made the namespace's deny-all NetworkPolicy`);
    }
    await reapExpiredLeases(coordination, ns).catch((error: unknown) =>
      log.warn(`${target.name}: could not look for expired leases: ${apiMessage(error)}`),
    );
    let lease: OwnerLease;
    try {
      lease = await OwnerLease.take(coordination, ns, formatOwner(currentOwner()));
    } catch (error) {
      throw kubeApiError(target.name, "take this process's Lease", error);
    }
    if (options.appArmor === false)
      log.info(`${target.name}: boxes ask for no AppArmor profile (apparmor=off)`);
    // A deadline given in the target (`deadline=SECONDS`, from the command line) unless the caller set one.
    const activeDeadlineSeconds = options.activeDeadlineSeconds ?? target.activeDeadlineSeconds;
    const probeImage = options.probeImage ?? target.probeImage;
    return new KubernetesEngine(target.name, ns, kc, core, networking, coordination, nodeApi, lease, {
      ...options,
      activeDeadlineSeconds,
      probeImage,
    });
  }

  /** Stops renewing this process's Lease and deletes it: the cluster deletes any box still owned by it. */
  close(): Promise<void> {
    return this.lease.close();
  }

  private target(id: string): PodTarget {
    return { kc: this.kc, namespace: this.namespace, pod: id, container: BOX_CONTAINER };
  }

  /** RuntimeClass names by handler: drydock names runtimes by their handler (runsc), a Pod by its class. */
  private classes(): Promise<Record<string, string>> {
    this.runtimeClasses ??= this.nodeApi.listRuntimeClass().then(
      (list) => Object.fromEntries(list.items.map((c) => [c.handler, c.metadata?.name ?? c.handler])),
      (error: unknown) => {
        this.runtimeClasses = undefined;
        throw this.wrap(error, "list RuntimeClasses");
      },
    );
    return this.runtimeClasses;
  }

  /**
   * Whether this namespace holds a box in, probed (network-probe.ts) with boxes made like `spec`;
   * not cached: `drydock doctor` asks this.
   */
  probeIsolation(spec: ContainerSpec): Promise<IsolationVerdict> {
    return probeIsolation(
      {
        makeProbePod: async (probe, node) =>
          (await this.makePod(probe, node, PROBE_DEADLINE_SECONDS)).metadata?.name ?? "",
        start: (id) => this.start(id),
        exec: (id, argv, options) => kubeExec(this.target(id), argv, options),
        podIp: (id) => this.podIp(id),
        boxNode: (id) => this.boxNode(id),
        remove: (id) => this.remove(id),
      },
      spec,
    );
  }

  /** Refuses to make boxes where the probe finds them not held in; the verdict is kept (see `verdicts`). */
  private async checkIsolation(spec: ContainerSpec): Promise<void> {
    const key = `${this.kc.getCurrentCluster()?.server ?? ""} ${this.namespace}`;
    let held = verdicts.get(key);
    if (!held) {
      const trusted = this.options.probeImage ?? this.serverImage;
      const image = trusted ?? spec.image;
      if (!trusted && isEnvironmentImage(image)) {
        throw new DrydockError(
          "network_not_enforced",
          `${this.name}: drydock makes no box until it has checked that boxes are held in, and it does not check with ${image}: an environment image is built from a repository's definition, whose programs could fake the answer. Add probe-image=IMAGE to --engine (drydock's sandbox image, on the nodes), or start a session with the sandbox image first`,
        );
      }
      held = { verdict: this.probeIsolation({ ...spec, image }), at: Date.now() };
      verdicts.set(key, held);
      // A probe that could not finish is no verdict: the next box probes again.
      held.verdict.catch(() => verdicts.delete(key));
      held.verdict
        .then((v) =>
          v.isolated
            ? log.info(`${this.name}: boxes are held in (${v.detail})`)
            : log.error(`${this.name}: boxes would have the network (${v.detail})`),
        )
        .catch(() => undefined);
    }
    let verdict: IsolationVerdict;
    try {
      verdict = await held.verdict;
    } catch (error) {
      throw new DrydockError(
        "network_not_enforced",
        `${this.name}: drydock makes no box until it has checked that boxes are held in, and the check failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (!verdict.isolated) {
      if (Date.now() - held.at > REPROBE_REFUSED_MS && verdicts.get(key) === held) verdicts.delete(key);
      throw isolationRefusal(this.name, verdict);
    }
  }

  /** Creates a Pod for spec, owned by this process's Lease, on `node` when given. */
  private async makePod(
    spec: ContainerSpec,
    node?: string,
    activeDeadlineSeconds = this.options.activeDeadlineSeconds,
  ): Promise<V1Pod> {
    // runc is the nodes' default handler: a Pod asks for it by naming no RuntimeClass.
    const runtime = spec.runtime === "runc" ? undefined : spec.runtime;
    const pod = podFor(
      {
        ...spec,
        runtime,
        image: await this.pins.podImage(spec.image, (why) =>
          log.warn(`${this.name}: ${spec.image} stays named by tag: ${why}`),
        ),
      },
      {
        namespace: this.namespace,
        runtimeClasses: runtime ? await this.classes() : {},
        appArmor: this.options.appArmor,
        ownerLease: { name: this.lease.name, uid: this.lease.uid },
        activeDeadlineSeconds,
        nodeName: node,
        imagePullSecrets: this.options.pullSecrets,
      },
    );
    try {
      const made = await this.core.createNamespacedPod({ namespace: this.namespace, body: pod as never });
      this.boxes.set(made.metadata?.name ?? pod.metadata.name, {
        nofile: spec.nofile,
        processes: spec.processLimit ?? 0,
        runtime,
      });
      return made;
    } catch (error) {
      throw this.wrap(error, `create a Pod from ${spec.image}`);
    }
  }

  /** Makes the box's Pod and NetworkPolicy; refused where the namespace's policy is not enforced. */
  async createBox(spec: ContainerSpec): Promise<string> {
    await this.checkIsolation(spec);
    const made = await this.makePod(spec);
    const name = made.metadata?.name ?? "";
    try {
      const policy = networkPolicyFor(spec, {
        namespace: this.namespace,
        pod: { name, uid: made.metadata?.uid ?? "" },
      });
      await this.networking.createNamespacedNetworkPolicy({
        namespace: this.namespace,
        body: policy as never,
      });
    } catch (error) {
      await this.remove(name).catch(() => undefined);
      throw this.wrap(error, `make the NetworkPolicy of ${name}`);
    }
    log.debug(`created pod ${name} from ${spec.image}${spec.runtime ? ` (${spec.runtime})` : ""}`);
    return name;
  }

  /** Waits until the Pod's box container runs; says why when it cannot (image, scheduling, exit). */
  async start(id: string): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    const started = Date.now();
    // A box usually runs within a second or two: looked at every 50 ms until then (a GET each),
    // so a session is not kept waiting by the look after; then less often.
    for (let wait = 50; ; wait = Date.now() - started < 3_000 ? 50 : Math.min(wait * 1.5, 500)) {
      const pod = await this.readPod(id);
      if (!pod) throw new DrydockError("engine_error", `start ${id}: the Pod is gone`);
      const box = pod.status?.containerStatuses?.find((c) => c.name === BOX_CONTAINER);
      if (box?.state?.running) return;
      const reason = box?.state?.waiting?.reason;
      if (reason && IMAGE_REASONS.has(reason)) {
        await this.remove(id).catch(() => undefined);
        throw new ImageMissingError(pod.spec?.containers[0]?.image ?? "?");
      }
      // Unschedulable waits: boxes ending free room (a box no node can hold was refused by the flags).
      const unschedulable = pod.status?.conditions?.find(
        (c) => c.type === "PodScheduled" && c.reason === "Unschedulable",
      );
      const phase = pod.status?.phase;
      if (phase === "Failed" || phase === "Succeeded" || box?.state?.terminated) {
        throw new DrydockError(
          "engine_error",
          `${id} ended before it ran: ${box?.state?.terminated?.reason ?? pod.status?.reason ?? phase} ${box?.state?.terminated?.message ?? pod.status?.message ?? ""}`.trim(),
        );
      }
      if (Date.now() > deadline) {
        await this.remove(id).catch(() => undefined);
        throw new DrydockError(
          "engine_error",
          unschedulable
            ? `no node had room for ${id} within ${START_TIMEOUT_MS / 1000} s: ${unschedulable.message ?? "unschedulable"}; lower --memory-mb, --cpus or --concurrency, or add nodes`
            : `${id} did not start in ${START_TIMEOUT_MS / 1000} s (${reason ?? phase ?? "pending"}: ${box?.state?.waiting?.message ?? ""})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  async remove(id: string): Promise<void> {
    this.boxes.delete(id);
    try {
      await this.core.deleteNamespacedPod({ name: id, namespace: this.namespace, gracePeriodSeconds: 0 });
      log.debug(`removed pod ${id}`);
    } catch (error) {
      if (apiStatusOf(error) !== 404) throw this.wrap(error, `remove ${id}`);
    }
  }

  private async readPod(id: string): Promise<V1Pod | undefined> {
    try {
      return await this.core.readNamespacedPod({ name: id, namespace: this.namespace });
    } catch (error) {
      if (apiStatusOf(error) === 404) return undefined;
      throw this.wrap(error, `read ${id}`);
    }
  }

  async isRunning(id: string): Promise<boolean> {
    const pod = await this.readPod(id);
    if (!pod || pod.metadata?.deletionTimestamp) return false;
    return pod.status?.containerStatuses?.find((c) => c.name === BOX_CONTAINER)?.state?.running !== undefined;
  }

  async boxState(id: string): Promise<BoxState | undefined> {
    const pod = await this.readPod(id);
    if (!pod) return undefined;
    const box = pod.status?.containerStatuses?.find((c) => c.name === BOX_CONTAINER);
    if (box?.state?.running && !pod.metadata?.deletionTimestamp) return { running: true };
    const ended = box?.state?.terminated ?? box?.lastState?.terminated;
    return { running: false, exitCode: ended?.exitCode, oomKilled: ended?.reason === "OOMKilled" };
  }

  async listBoxes(label: string, value?: string): Promise<BoxSummary[]> {
    const labelSelector = value === undefined ? label : `${label}=${labelSelectorValue(value)}`;
    let items: V1Pod[];
    try {
      items = (await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector })).items;
    } catch (error) {
      throw this.wrap(error, `list boxes labelled ${labelSelector}`);
    }
    return items
      .map((pod) => {
        const labels = boxLabelsOf(pod.metadata ?? {});
        return {
          id: pod.metadata?.name ?? "",
          name: pod.metadata?.name ?? "",
          labels,
          state: stateOf(pod),
          createdAt: new Date(pod.metadata?.creationTimestamp ?? 0),
        };
      })
      .filter((b) => value === undefined || b.labels[label] === value);
  }

  /** The box's open-files limit and runtime, from this process's record or its Pod. */
  private async boxInfo(id: string): Promise<BoxInfo | undefined> {
    const known = this.boxes.get(id);
    if (known) return known;
    const pod = await this.readPod(id);
    if (!pod) return undefined;
    const byClass = Object.entries(await this.classes()).find(
      ([, c]) => c === pod.spec?.runtimeClassName,
    )?.[0];
    const annotations = pod.metadata?.annotations ?? {};
    const info = {
      nofile: Number(annotations[ANNOTATION_NOFILE] ?? 0),
      processes: Number(annotations[ANNOTATION_PROCESSES] ?? 0),
      runtime: byClass,
    };
    this.boxes.set(id, info);
    return info;
  }

  /**
   * argv behind the box's limits: `ulimit -n` (and under gVisor `ulimit -u`, bash's) then exec, so
   * the program holds them. A limit not known is not set.
   */
  private limited(argv: string[], info: BoxInfo | undefined): string[] {
    if (!info?.nofile) return argv;
    if (info.processes > 0) {
      return [
        "/bin/bash",
        "-c",
        'ulimit -n "$0" && ulimit -u "$1" && shift && exec "$@"',
        String(info.nofile),
        String(info.processes),
        ...argv,
      ];
    }
    return ["/bin/sh", "-c", 'ulimit -n "$0" && exec "$@"', String(info.nofile), ...argv];
  }

  async exec(id: string, argv: string[], options: ExecOptions = {}): Promise<ExecResult> {
    const info = await this.boxInfo(id);
    return kubeExec(this.target(id), this.limited(argv, info), options);
  }

  async openTerminal(id: string, argv: string[], options: TerminalExecOptions = {}): Promise<TerminalExec> {
    const info = await this.boxInfo(id);
    const size = { cols: options.cols ?? 120, rows: options.rows ?? 50 };
    return kubeTerminal(
      this.target(id),
      this.limited(terminalArgv(argv, info?.runtime, size), info),
      options,
    );
  }

  async answers(timeoutMs = 5_000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([
        // A read in the namespace: the API answers and this client may use it (no cluster-wide read).
        this.core.listNamespacedPod({ namespace: this.namespace, limit: 1 }).then(
          () => true,
          () => false,
        ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The box's address on the cluster network (a probe of isolation needs it); none under gVisor's none. */
  async podIp(id: string): Promise<string | undefined> {
    return (await this.readPod(id))?.status?.podIP;
  }

  async boxNode(id: string): Promise<string | undefined> {
    return (await this.readPod(id))?.spec?.nodeName;
  }

  /**
   * Makes the image present on every Ready node: there already, or put there by the configured
   * loader (then waited for until the nodes report it); else an error saying how to get it there.
   */
  async ensureImage(ref: string): Promise<void> {
    if (await this.hasImage(ref)) return;
    const loader = this.options.loadImage;
    // The image goes last, as one argument: one that looks like an option is not passed on.
    if (!loader?.length || ref.startsWith("-")) throw clusterImageMissing(this.name, ref);
    log.info(`${this.name}: loading ${ref} onto the nodes (${loader.join(" ")})`);
    await runLoader(loader, ref, () => this.hasImage(ref));
  }

  /**
   * Whether a box can run the image: every Ready node reports it (the kubelet lists a node's
   * images in its status), or it names a registry that has it, for the nodes to pull.
   */
  async hasImage(ref: string): Promise<boolean> {
    if (nodesHaveImage(await this.readyNodes(), ref)) return true;
    return (await this.pins.digest(ref)) !== undefined;
  }

  private async readyNodes(): Promise<V1Node[]> {
    try {
      return await readyNodes(this.core);
    } catch (error) {
      throw this.wrap(error, "list nodes");
    }
  }

  /** The largest allocatable CPU and memory of a Ready node: a box must fit in one node. */
  async capacity(): Promise<{ cpus: number; memoryMB: number }> {
    return nodesCapacity(await this.readyNodes(), Math.max);
  }

  /**
   * The image a server gives its sessions when a repository has no environment (its `--image`,
   * whose programs drydock trusts): the NetworkPolicy probe runs it unless probe-image= names
   * another, so a first session on an environment image is probed all the same.
   */
  trustProbeImage(image: string): void {
    this.serverImage = image;
  }

  /**
   * How many more boxes of a size the nodes and the namespace's ResourceQuotas hold now
   * (cluster-room.ts). Pods of every namespace are counted where drydock may list them; else its
   * own namespace's, and the sentence says so. Callers asking at once share one reading.
   */
  room(box: BoxSize): Promise<ClusterRoom> {
    const key = `${box.cpus}/${box.memoryMB}`;
    let reading = this.roomReadings.get(key);
    if (!reading) {
      reading = this.readRoom(box).finally(() => this.roomReadings.delete(key));
      this.roomReadings.set(key, reading);
    }
    return reading;
  }

  private async readRoom(box: BoxSize): Promise<ClusterRoom> {
    const live = "status.phase!=Succeeded,status.phase!=Failed";
    let pods: V1Pod[] | undefined;
    if (this.listsAllPods !== false) {
      try {
        pods = (await this.core.listPodForAllNamespaces({ fieldSelector: live })).items;
        this.listsAllPods = true;
      } catch (error) {
        if (apiStatusOf(error) !== 403) throw this.wrap(error, "list Pods of every namespace");
        this.listsAllPods = false;
      }
    }
    pods ??= await this.core
      .listNamespacedPod({ namespace: this.namespace, fieldSelector: live })
      .then((list) => list.items)
      .catch((error: unknown) => {
        throw this.wrap(error, "list Pods");
      });
    const quotas = await this.core
      .listNamespacedResourceQuota({ namespace: this.namespace })
      .then((list) => list.items)
      .catch((error: unknown) => {
        throw this.wrap(error, "list ResourceQuotas");
      });
    return clusterRoom({
      nodes: await this.readyNodes(),
      pods,
      allNamespaces: this.listsAllPods === true,
      namespace: this.namespace,
      quotas,
      box,
    });
  }

  /** Every Ready node's allocatable CPU and memory together: what the scheduler spreads boxes over. */
  async totalCapacity(): Promise<{ cpus: number; memoryMB: number }> {
    return nodesCapacity(await this.readyNodes(), (a, b) => a + b);
  }

  /** runc (the nodes' default handler) and each RuntimeClass's handler. */
  async runtimes(): Promise<EngineRuntime[]> {
    const handlers = Object.keys(await this.classes());
    return ["runc", ...handlers.filter((h) => h !== "runc")].map((name) => ({
      name,
      path: "",
      args: [],
      argsKnown: false,
    }));
  }

  private wrap(error: unknown, what: string): Error {
    return kubeApiError(this.name, what, error);
  }
}

/** A Pod's state in Docker's words, as listings show it: running, created (pending) or exited. */
function stateOf(pod: V1Pod): string {
  if (pod.metadata?.deletionTimestamp) return "removing";
  const box = pod.status?.containerStatuses?.find((c) => c.name === BOX_CONTAINER);
  if (box?.state?.running) return "running";
  if (box?.state?.terminated || pod.status?.phase === "Failed" || pod.status?.phase === "Succeeded")
    return "exited";
  return "created";
}
