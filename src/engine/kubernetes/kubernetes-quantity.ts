/**
 * Resource quantities as Kubernetes writes them: CPUs in cores or millicores ("1", "1500m"),
 * memory in mebibytes ("2048Mi", the unit drydock's limits are in).
 */
import { InvalidArgumentError } from "../../util/errors.js";

/** CPUs as a quantity; a millicore is the smallest step Kubernetes takes. */
export function cpuQuantity(cpus: number): string {
  const millicores = Math.round(cpus * 1000);
  if (!Number.isFinite(cpus) || millicores < 1) {
    throw new InvalidArgumentError("cpus", `${cpus} is not a CPU limit Kubernetes takes: give 0.001 or more`);
  }
  return millicores % 1000 === 0 ? String(millicores / 1000) : `${millicores}m`;
}

/** Whole mebibytes as a quantity; `field` names the limit a bad value came from. */
export function mebibytes(sizeMB: number, field: string): string {
  if (!Number.isInteger(sizeMB) || sizeMB < 1) {
    throw new InvalidArgumentError(field, `${sizeMB} is not a size in whole MiB: give 1 or more`);
  }
  return `${sizeMB}Mi`;
}

const SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A quantity as the API reports it ("1500m", "24Gi", "25165824Ki", "1e3") as a number; NaN if unreadable. */
export function quantityValue(quantity: string): number {
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei))?$/.exec(
    quantity.trim(),
  );
  if (!match) return Number.NaN;
  const base = Number(match[1]);
  if (match[2] !== undefined) return base * 10 ** Number(match[2]);
  return base * SUFFIXES[match[3] ?? ""]!;
}

/** CPUs in a quantity; 0 when unreadable. */
export function cpusOf(quantity: string): number {
  const value = quantityValue(quantity);
  return Number.isFinite(value) ? value : 0;
}

/** Whole mebibytes in a quantity; 0 when unreadable. */
export function mebibytesOf(quantity: string): number {
  const value = quantityValue(quantity);
  return Number.isFinite(value) ? Math.floor(value / 2 ** 20) : 0;
}
