/**
 * The environment images an engine holds (`drydock env list`) and their removal
 * (`drydock env prune`). Every environment gets an image of its own, keyed by what it was built
 * from, so a repository whose lock files change leaves one behind at each change; nothing removes
 * them but this. An image a box (running or stopped) was made from is never removed; one removed
 * and needed again is rebuilt by the next session that asks for it.
 */
import type { Engine, ImageSummary } from "../engine/engine.js";

/** The label every environment image carries (its key); base images carry BASE_LABEL. */
export const ENV_LABEL = "drydock.env.hash";
export const BASE_LABEL = "drydock.env.base-of";

export interface EnvironmentImage {
  id: string;
  /** Its tag, or the short id when it has none (a tag another build took over). */
  name: string;
  tags: string[];
  kind: "environment" | "base";
  /** The repository it was built for (environment images). */
  repo: string | null;
  /** The definition file it was built from ("default" when none). */
  source: string | null;
  createdAt: Date;
  sizeBytes: number;
  /** How many boxes (running or stopped) were made from it. */
  boxes: number;
}

/**
 * Every environment image and base image on the engine, newest first; with `repo`, only those
 * built for that repository (its root as drydock resolved it).
 */
export async function environmentImages(engine: Engine, repo?: string): Promise<EnvironmentImage[]> {
  const [envs, bases, inUse] = await Promise.all([
    engine.listImages(ENV_LABEL),
    engine.listImages(BASE_LABEL),
    engine.boxesByImage(),
  ]);
  const seen = new Set<string>();
  const images: EnvironmentImage[] = [];
  for (const [kind, list] of [
    ["environment", envs],
    ["base", bases],
  ] as const) {
    for (const i of list) {
      if (seen.has(i.id) || (repo !== undefined && i.labels["drydock.env.repo"] !== repo)) continue;
      seen.add(i.id);
      images.push(describeImage(i, kind, inUse.get(i.id) ?? 0));
    }
  }
  return images.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}

function describeImage(i: ImageSummary, kind: EnvironmentImage["kind"], boxes: number): EnvironmentImage {
  return {
    id: i.id,
    name: i.tags[0] ?? i.id.replace(/^sha256:/, "").slice(0, 12),
    tags: i.tags,
    kind,
    repo: i.labels["drydock.env.repo"] ?? null,
    source: i.labels["drydock.env.source"] ?? null,
    createdAt: i.createdAt,
    sizeBytes: i.sizeBytes,
    boxes,
  };
}

export interface PruneChoice {
  remove: EnvironmentImage[];
  keep: Array<{ image: EnvironmentImage; why: string }>;
}

/**
 * Which images a prune removes: those no box was made from, built more than `olderThanMs` ago
 * (0: any age). An untagged image (its tag went to a newer build) goes whatever its age.
 */
export function choosePrune(images: EnvironmentImage[], olderThanMs: number, now = new Date()): PruneChoice {
  const choice: PruneChoice = { remove: [], keep: [] };
  for (const image of images) {
    const age = now.getTime() - image.createdAt.getTime();
    if (image.boxes > 0)
      choice.keep.push({ image, why: `${image.boxes} box${image.boxes === 1 ? "" : "es"} made from it` });
    else if (image.tags.length > 0 && age < olderThanMs)
      choice.keep.push({ image, why: `built ${formatAge(age)} ago, within --older-than` });
    else choice.remove.push(image);
  }
  return choice;
}

/**
 * Removes the chosen images, never by force; an image a box started from meanwhile is refused by
 * the engine and reported as kept.
 */
export async function removeImages(
  engine: Engine,
  images: EnvironmentImage[],
): Promise<{ removed: EnvironmentImage[]; refused: EnvironmentImage[] }> {
  const removed: EnvironmentImage[] = [];
  const refused: EnvironmentImage[] = [];
  for (const image of images) {
    let gone = true;
    for (const ref of image.tags.length > 0 ? image.tags : [image.id])
      gone = (await engine.removeImage(ref)) && gone;
    (gone ? removed : refused).push(image);
  }
  return { removed, refused };
}

export function formatAge(ms: number): string {
  const s = Math.max(0, ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

export function formatSize(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}
