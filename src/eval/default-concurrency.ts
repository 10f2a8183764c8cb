/**
 * How many boxes run at once by default: one per core, and no more than the memory allows when
 * each box may use its whole limit (with a quarter of the memory left for the host). At least 1.
 */
import { availableParallelism, totalmem } from "node:os";

export function defaultConcurrency(
  boxMemoryMB: number,
  cores: number = availableParallelism(),
  memoryMB: number = totalmem() / (1024 * 1024),
): number {
  const byMemory = Math.floor((memoryMB * 0.75) / Math.max(boxMemoryMB, 1));
  return Math.max(1, Math.min(cores, byMemory));
}
