/**
 * `drydock env list` and `drydock env prune`: the environment images the engine holds, and their
 * removal (environment-prune.ts says which go).
 */
import type { Command } from "commander";
import { Engine } from "../engine/engine.js";
import {
  choosePrune,
  environmentImages,
  formatAge,
  formatSize,
  removeImages,
  type EnvironmentImage,
} from "../environment/environment-prune.js";
import { FlagError, InvalidArgumentError } from "../util/errors.js";
import { openHostRepo } from "../workspace/host-repo.js";
import { decimal } from "./flag-values.js";
import { textTable } from "./text-table.js";
import { printJson, printOut } from "./terminal-out.js";

const DEFAULT_OLDER_THAN_DAYS = 14;

function imageJson(image: EnvironmentImage, now: Date) {
  return {
    image: image.name,
    id: image.id,
    tags: image.tags,
    kind: image.kind,
    repo: image.repo,
    source: image.source,
    created_at: image.createdAt.toISOString(),
    age_s: Math.round((now.getTime() - image.createdAt.getTime()) / 1000),
    size_bytes: image.sizeBytes,
    boxes: image.boxes,
  };
}

function imageRow(image: EnvironmentImage, now: Date, extra?: string): string[] {
  const row = [
    image.name,
    image.kind,
    formatAge(now.getTime() - image.createdAt.getTime()),
    formatSize(image.sizeBytes),
    String(image.boxes),
    image.repo ?? "–",
  ];
  return extra === undefined ? row : [...row, extra];
}

/** The repository's root as environment images record it; undefined without --repo. */
async function repoRoot(path: string | undefined): Promise<string | undefined> {
  if (path === undefined) return undefined;
  try {
    return (await openHostRepo(path, "--repo")).root;
  } catch (error) {
    if (error instanceof InvalidArgumentError)
      throw new FlagError("--repo", error.message.replace(/^--repo: /, ""));
    throw error;
  }
}

const HEADER = ["IMAGE", "KIND", "AGE", "SIZE", "BOXES", "REPOSITORY"];

export function registerEnvImageCommands(env: Command): void {
  env
    .command("list")
    .description(
      "list the environment images the engine holds: repository, age, size (with the sandbox layers they share) and the boxes made from each",
    )
    .option("--repo <path>", "only the images built for this repository")
    .option("--json", "print JSON")
    .action(async (opts: { repo?: string; json?: boolean }) => {
      const engine = await Engine.connect();
      const images = await environmentImages(engine, await repoRoot(opts.repo));
      const now = new Date();
      if (opts.json) {
        printJson(
          images.map((i) => imageJson(i, now)),
          2,
        );
        return;
      }
      if (images.length === 0) {
        printOut("no environment images on this engine\n");
        return;
      }
      printOut(textTable([HEADER, ...images.map((i) => imageRow(i, now))]));
    });

  env
    .command("prune")
    .description(
      `remove environment images no box was made from and built more than --older-than days ago (default ${DEFAULT_OLDER_THAN_DAYS}); a removed environment is built again when a session needs it`,
    )
    .option(
      "--older-than <days>",
      `remove only images built at least this many days ago; 0 removes every unused one (default ${DEFAULT_OLDER_THAN_DAYS})`,
    )
    .option("--repo <path>", "only the images built for this repository")
    .option("--dry-run", "print what would be removed, and why the rest stay; remove nothing")
    .option("--json", "print JSON")
    .action(async (opts: { olderThan?: string; repo?: string; dryRun?: boolean; json?: boolean }) => {
      const days = decimal(opts.olderThan, "--older-than", { min: 0, example: 7 }) ?? DEFAULT_OLDER_THAN_DAYS;
      const engine = await Engine.connect();
      const now = new Date();
      const choice = choosePrune(
        await environmentImages(engine, await repoRoot(opts.repo)),
        days * 86_400_000,
        now,
      );
      const { removed, refused } = opts.dryRun
        ? { removed: [], refused: [] }
        : await removeImages(engine, choice.remove);
      const kept = [
        ...choice.keep,
        ...refused.map((image) => ({ image, why: "a box was made from it meanwhile" })),
      ];
      if (opts.json) {
        const out = {
          dry_run: opts.dryRun === true,
          older_than_days: days,
          [opts.dryRun ? "would_remove" : "removed"]: (opts.dryRun ? choice.remove : removed).map((i) =>
            imageJson(i, now),
          ),
          kept: kept.map((k) => ({ ...imageJson(k.image, now), why: k.why })),
        };
        printJson(out, 2);
        return;
      }
      const gone = opts.dryRun ? choice.remove : removed;
      const freed = gone.reduce((sum, i) => sum + i.sizeBytes, 0);
      const verb = opts.dryRun ? "would remove" : "removed";
      if (gone.length > 0)
        printOut(textTable([[...HEADER, "ACTION"], ...gone.map((i) => imageRow(i, now, verb))]));
      if (kept.length > 0)
        printOut(textTable([[...HEADER, "KEPT BECAUSE"], ...kept.map((k) => imageRow(k.image, now, k.why))]));
      printOut(
        gone.length === 0
          ? "no environment image to remove\n"
          : `${verb} ${gone.length} image${gone.length === 1 ? "" : "s"} (${formatSize(freed)} counting the layers they share, so the disk freed is less)\n`,
      );
    });
}
