/**
 * The Lease (coordination.k8s.io/v1) a drydock process holds in the box namespace while it lives.
 * Every box it makes names the Lease as its owner, so deleting the Lease deletes the boxes (the
 * cluster's garbage collector does it, wherever drydock ran). The holder renews it every
 * `renewSeconds`; a clean close deletes it; any drydock deletes Leases that nobody renewed for
 * three durations (`reapExpiredLeases`), which is how the boxes of a drydock that died on another
 * machine go. On one machine the owner label's process check (labels.ts) reaps sooner.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  PatchStrategy,
  setHeaderOptions,
  type CoordinationV1Api,
  type V1Lease,
} from "@kubernetes/client-node";
import { logger } from "../../util/log.js";
import { apiMessage, apiStatusOf } from "./kube-api-error.js";

const log = logger("kubernetes");

/** The label every drydock owner Lease carries, so reaping lists only those. */
export const LEASE_LABEL = "drydock.owner-lease";
/** How long a Lease counts as held after its last renewal. */
export const LEASE_SECONDS = 30;
/** A Lease not renewed for this many durations is a dead drydock's. */
const EXPIRED_AFTER_DURATIONS = 3;

/**
 * Now as a MicroTime, the only form the API takes for a Lease's times (six fractional digits). The
 * client's types say Date and its serializer writes a Date with three digits, which the API
 * refuses; a string passes through its serializer as it is.
 */
function microTime(date = new Date()): Date {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z") as unknown as Date;
}

export class OwnerLease {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly api: CoordinationV1Api,
    readonly namespace: string,
    readonly name: string,
    readonly uid: string,
  ) {}

  /** Creates this process's Lease (named after `owner` and a random part) and starts renewing it. */
  static async take(
    api: CoordinationV1Api,
    namespace: string,
    owner: string,
    seconds = LEASE_SECONDS,
  ): Promise<OwnerLease> {
    const digest = createHash("sha256").update(owner).digest("hex").slice(0, 16);
    const name = `drydock-owner-${digest}-${randomBytes(3).toString("hex")}`;
    const lease = await api.createNamespacedLease({
      namespace,
      body: {
        metadata: {
          name,
          namespace,
          labels: { [LEASE_LABEL]: "1" },
          annotations: { "drydock.owner": owner },
        },
        spec: {
          holderIdentity: owner,
          leaseDurationSeconds: seconds,
          acquireTime: microTime(),
          renewTime: microTime(),
        },
      },
    });
    const held = new OwnerLease(api, namespace, name, lease.metadata?.uid ?? "");
    held.renewEvery(Math.max(1, Math.floor(seconds / 3)) * 1000);
    return held;
  }

  private renewEvery(ms: number): void {
    this.timer = setInterval(() => {
      if (this.closed) return;
      this.api
        .patchNamespacedLease(
          { name: this.name, namespace: this.namespace, body: { spec: { renewTime: microTime() } } },
          // A merge patch: only renewTime changes.
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        )
        .catch((error: unknown) => log.warn(`could not renew lease ${this.name}: ${apiMessage(error)}`));
    }, ms);
    this.timer.unref();
  }

  /** Stops renewing and deletes the Lease (and with it any box still owned by it). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.api
      .deleteNamespacedLease({ name: this.name, namespace: this.namespace, propagationPolicy: "Background" })
      .catch((error: unknown) => {
        if (apiStatusOf(error) !== 404) log.warn(`could not delete lease ${this.name}: ${apiMessage(error)}`);
      });
  }
}

/** Whether a Lease was last renewed more than three durations before `now`. */
export function leaseExpired(lease: V1Lease, now = Date.now()): boolean {
  const renewed = lease.spec?.renewTime ?? lease.spec?.acquireTime ?? lease.metadata?.creationTimestamp;
  if (!renewed) return true;
  const seconds = lease.spec?.leaseDurationSeconds ?? LEASE_SECONDS;
  return now - new Date(renewed).getTime() > seconds * 1000 * EXPIRED_AFTER_DURATIONS;
}

/** Deletes the drydock Leases in `namespace` nobody renews; the cluster then deletes their boxes. */
export async function reapExpiredLeases(api: CoordinationV1Api, namespace: string): Promise<string[]> {
  const list = await api.listNamespacedLease({ namespace, labelSelector: LEASE_LABEL });
  const expired = list.items.filter((lease) => leaseExpired(lease));
  const reaped: string[] = [];
  for (const lease of expired) {
    const name = lease.metadata?.name;
    if (!name) continue;
    try {
      await api.deleteNamespacedLease({ name, namespace, propagationPolicy: "Background" });
      reaped.push(name);
      log.info(
        `deleted lease ${name} (not renewed since ${String(lease.spec?.renewTime)}): its boxes go with it`,
      );
    } catch (error) {
      if (apiStatusOf(error) !== 404) log.warn(`could not delete lease ${name}: ${apiMessage(error)}`);
    }
  }
  return reaped;
}
