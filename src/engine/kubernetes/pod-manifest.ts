/**
 * A box as a Kubernetes Pod (v1): the same hardening `toCreateOptions` asks of Docker, in the
 * Pod's terms. Pure, so the manifest can be checked against the Kubernetes API's schema without a
 * cluster. What Kubernetes has no field for, and what a backend does instead:
 *
 * - pidsLimit: no Pod or container field; the kubelet's podPidsLimit caps every pod on a node.
 *   The limit is kept in an annotation, and the backend schedules boxes only on nodes whose
 *   podPidsLimit is set and no higher.
 * - nofile: no field; the annotation keeps it, and the backend lowers it in each exec
 *   (`ulimit -n` before the program, which a process may lower and not raise again).
 * - Init (tini as pid 1): `shareProcessNamespace`, so the pod's pause process is pid 1 and reaps
 *   orphaned children. The box has no sidecar, so sharing shows it nothing but pause.
 * - tmpfs mounts: memory-backed emptyDir volumes with a sizeLimit (counted against the memory
 *   limit, as Docker's tmpfs is); their roots are mode 0777 and can be neither noexec nor given
 *   an owner, so a box's single user can write each and a noexec mount is lost. git refuses a
 *   repository whose top directory another user owns ("dubious ownership"), so each such root is
 *   named safe for git in the container's environment (GIT_CONFIG_COUNT/KEY/VALUE: command-line
 *   scope, which git honours for safe.directory); the box has one user, so this trusts no one new.
 * - host paths: none. A spec has no field for one, and a Pod gets no hostPath or CSI volume: the
 *   gateway and egress proxy reach the box through drydock's relay over its exec stream, so
 *   drydock need not run on the box's node.
 * - network "none": no Pod field; a deny-all NetworkPolicy (network-policy.ts). Any other network
 *   (a Docker network by name) is refused.
 * - runtime: a RuntimeClass (runsc → gvisor by default).
 */
import { InvalidArgumentError } from "../../util/errors.js";
import type { ContainerSpec } from "../container-spec.js";
import { metadataFor, type ObjectMeta } from "./kubernetes-metadata.js";
import { cpuQuantity, mebibytes } from "./kubernetes-quantity.js";

/** Runs the box's command with no stream the container runtime reads: nothing it writes is kept. */
export const QUIET_FIRST_PROCESS = 'exec "$@" </dev/null >/dev/null 2>&1';
/** Where the kubelet's termination-message file is mounted: in a directory the box user cannot enter. */
export const TERMINATION_MESSAGE_PATH = "/root/.drydock-termination-log";

/** The annotations that record limits Kubernetes has no field for. */
export const ANNOTATION_PIDS_LIMIT = "drydock.limits.pids";
export const ANNOTATION_NOFILE = "drydock.limits.nofile";
export const ANNOTATION_PROCESSES = "drydock.limits.processes";
/** The box's container in its Pod. */
export const BOX_CONTAINER = "box";

export interface PodOptions {
  /** The namespace boxes live in. */
  namespace: string;
  /** The RuntimeClass for each runtime a spec may name; default { runsc: "gvisor" }. */
  runtimeClasses?: Record<string, string>;
  /** The runtime's default AppArmor profile (nodes without AppArmor refuse such pods); default true. */
  appArmor?: boolean;
  /**
   * The Lease (coordination.k8s.io/v1, in the box's namespace) its drydock renews while it lives:
   * deleting an expired one deletes its boxes. Default none.
   */
  ownerLease?: { name: string; uid: string };
  /** Kubernetes ends the box after this many seconds whatever happens to drydock; default none. */
  activeDeadlineSeconds?: number;
  /** The node the Pod must run on (a probe's second Pod goes beside its first); default the scheduler's choice. */
  nodeName?: string;
  /** Default IfNotPresent: images are put on the nodes ahead (see docs/kubernetes.md). */
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  /** Secrets (in the box's namespace) the kubelet pulls the image with; the box never sees them. */
  imagePullSecrets?: readonly string[];
}

type Quantities = { cpu: string; memory: string };

export interface Volume {
  name: string;
  emptyDir?: { medium: "Memory"; sizeLimit: string };
}

export interface Container {
  name: string;
  image: string;
  imagePullPolicy: string;
  command: string[];
  terminationMessagePath: string;
  workingDir: string;
  env: Array<{ name: string; value: string }>;
  stdin: boolean;
  tty: boolean;
  resources: { limits: Quantities; requests: Quantities };
  securityContext: {
    privileged: boolean;
    readOnlyRootFilesystem: boolean;
    allowPrivilegeEscalation: boolean;
    capabilities: { drop: string[]; add?: string[] };
  };
  volumeMounts: Array<{ name: string; mountPath: string; readOnly: boolean }>;
}

export interface Pod {
  apiVersion: "v1";
  kind: "Pod";
  metadata: ObjectMeta;
  spec: {
    restartPolicy: "Never";
    automountServiceAccountToken: boolean;
    enableServiceLinks: boolean;
    hostNetwork: boolean;
    hostPID: boolean;
    hostIPC: boolean;
    shareProcessNamespace: boolean;
    terminationGracePeriodSeconds: number;
    activeDeadlineSeconds?: number;
    nodeName?: string;
    runtimeClassName?: string;
    securityContext: {
      runAsUser: number;
      runAsGroup: number;
      runAsNonRoot: boolean;
      seccompProfile: { type: "RuntimeDefault" };
      appArmorProfile?: { type: "RuntimeDefault" };
    };
    containers: Container[];
    volumes: Volume[];
    imagePullSecrets?: Array<{ name: string }>;
  };
}

/** "1000" or "1000:1000" as numbers; Kubernetes takes no user names. */
function numericUser(user: string): { uid: number; gid: number } {
  const match = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!match) {
    throw new InvalidArgumentError(
      "user",
      `"${user}" is not a numeric uid; a Pod's runAsUser takes numbers only: give "1000" or "1000:1000"`,
    );
  }
  const uid = Number(match[1]);
  return { uid, gid: match[2] === undefined ? uid : Number(match[2]) };
}

function runtimeClassFor(spec: ContainerSpec, classes: Record<string, string>): string | undefined {
  if (!spec.runtime) return undefined;
  const name = classes[spec.runtime];
  if (!name) {
    const known = Object.keys(classes);
    throw new InvalidArgumentError(
      "runtime",
      `no RuntimeClass is named for runtime "${spec.runtime}"; map it in runtimeClasses (known: ${known.join(", ") || "none"})`,
    );
  }
  return name;
}

/** git's safe.directory for each tmpfs root (root-owned on Kubernetes), unless the spec sets git config itself. */
function gitSafeDirectories(spec: ContainerSpec): Array<{ name: string; value: string }> {
  if (spec.tmpfs.length === 0 || "GIT_CONFIG_COUNT" in spec.env) return [];
  return [
    { name: "GIT_CONFIG_COUNT", value: String(spec.tmpfs.length) },
    ...spec.tmpfs.flatMap((t, i) => [
      { name: `GIT_CONFIG_KEY_${i}`, value: "safe.directory" },
      { name: `GIT_CONFIG_VALUE_${i}`, value: t.path },
    ]),
  ];
}

/** The Pod that runs a box made from spec; throws InvalidArgumentError for what Kubernetes cannot give. */
export function podFor(spec: ContainerSpec, options: PodOptions): Pod {
  if (spec.network !== "none") {
    throw new InvalidArgumentError(
      "network",
      `"${spec.network}" is a Docker network; on Kubernetes a box has no network ("none"), and egress goes through the node's proxy`,
    );
  }
  const { uid, gid } = numericUser(spec.user);
  // A container with SYS_ADMIN always may escalate, so the API refuses the pair; Docker takes it.
  if (spec.noNewPrivileges && spec.capAdd.some((c) => /^(CAP_)?SYS_ADMIN$/i.test(c))) {
    throw new InvalidArgumentError(
      "capAdd",
      "SYS_ADMIN cannot be kept while privilege escalation is off; a Pod allows it only with allowNewPrivileges",
    );
  }
  const metadata = metadataFor(spec.name ?? "", options.namespace, spec.labels);
  if (options.ownerLease) {
    metadata.ownerReferences = [
      { apiVersion: "coordination.k8s.io/v1", kind: "Lease", ...options.ownerLease },
    ];
  }
  metadata.annotations = {
    ...metadata.annotations,
    [ANNOTATION_PIDS_LIMIT]: String(spec.pidsLimit),
    [ANNOTATION_NOFILE]: String(spec.nofile),
    ...(spec.processLimit !== undefined ? { [ANNOTATION_PROCESSES]: String(spec.processLimit) } : {}),
  };
  const runtimeClassName = runtimeClassFor(spec, options.runtimeClasses ?? { runsc: "gvisor" });
  const volumes: Volume[] = [];
  const volumeMounts: Container["volumeMounts"] = [];
  spec.tmpfs.forEach((t, i) => {
    volumes.push({
      name: `tmpfs-${i}`,
      emptyDir: { medium: "Memory", sizeLimit: mebibytes(t.sizeMB, `tmpfs ${t.path}`) },
    });
    volumeMounts.push({ name: `tmpfs-${i}`, mountPath: t.path, readOnly: false });
  });
  // Requests equal to limits: the Guaranteed QoS class, so the box is not the first one evicted
  // and gets no swap where a node has some (Docker's MemorySwap = Memory).
  const quantities: Quantities = {
    cpu: cpuQuantity(spec.cpus),
    memory: mebibytes(spec.memoryMB, "memoryMB"),
  };
  // Kubernetes names capabilities without the CAP_ prefix Docker also accepts.
  const capability = (c: string): string => c.replace(/^CAP_/i, "").toUpperCase();
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata,
    spec: {
      restartPolicy: "Never",
      // The box must hold no credential: no service account token, no service addresses.
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      shareProcessNamespace: true,
      terminationGracePeriodSeconds: 1,
      ...(options.activeDeadlineSeconds !== undefined
        ? { activeDeadlineSeconds: options.activeDeadlineSeconds }
        : {}),
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
      ...(runtimeClassName ? { runtimeClassName } : {}),
      ...(options.imagePullSecrets?.length
        ? { imagePullSecrets: options.imagePullSecrets.map((name) => ({ name })) }
        : {}),
      securityContext: {
        runAsUser: uid,
        runAsGroup: gid,
        runAsNonRoot: uid !== 0,
        // Docker applies its default seccomp (and AppArmor) profile unasked; Kubernetes does not.
        seccompProfile: { type: "RuntimeDefault" },
        ...(options.appArmor === false ? {} : { appArmorProfile: { type: "RuntimeDefault" as const } }),
      },
      containers: [
        {
          name: BOX_CONTAINER,
          image: spec.image,
          imagePullPolicy: options.imagePullPolicy ?? "IfNotPresent",
          // The box's command, and nothing of the image's entrypoint (a box image has none), with
          // its streams on /dev/null: what the agent writes to them (through /proc/<pid>/fd/1)
          // would otherwise go to the node's log of the container, on the node's disk, and an
          // entrypoint left as a parent would keep them open. (Docker: LogConfig none.)
          command: ["sh", "-c", QUIET_FIRST_PROCESS, "drydock-box", ...spec.command],
          // The kubelet makes this file on the node, writable by anyone, and mounts it in the box
          // (default /dev/termination-log): under /root (0700, root's) the box user cannot open it.
          terminationMessagePath: TERMINATION_MESSAGE_PATH,
          workingDir: spec.workdir,
          env: [
            ...Object.entries(spec.env).map(([name, value]) => ({ name, value })),
            ...gitSafeDirectories(spec),
          ],
          stdin: false,
          tty: false,
          resources: { limits: quantities, requests: { ...quantities } },
          securityContext: {
            privileged: false,
            readOnlyRootFilesystem: spec.readOnlyRootfs,
            allowPrivilegeEscalation: !spec.noNewPrivileges,
            capabilities: {
              drop: spec.capDrop.map(capability),
              ...(spec.capAdd.length ? { add: spec.capAdd.map(capability) } : {}),
            },
          },
          volumeMounts,
        },
      ],
      volumes,
    },
  };
}
