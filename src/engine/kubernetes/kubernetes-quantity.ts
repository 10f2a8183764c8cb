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
