/**
 * The patch agent's answers (`--patches`): a folder of `<task id>.diff` / `.patch` files, or a
 * SWE-bench predictions file (`.json`: a list, or an object keyed by instance id; `.jsonl`: one
 * prediction a line) of `{instance_id, model_patch, model_name_or_path}`. A task with no
 * prediction is told apart from an empty one, and every prediction has a content key so a resumed
 * run re-grades a task whose prediction changed.
 */
import { createHash } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { z } from "zod";
import { InvalidArgumentError } from "../util/errors.js";

export interface Prediction {
  /** The unified diff; "" (or SWE-bench's null) is an empty answer. */
  patch: string;
  /** `model_name_or_path` of a predictions file. */
  model?: string;
  /** Where it came from, for logs: "preds.jsonl:3" or "patches/foo.diff". */
  source: string;
}

export interface Predictions {
  kind: "dir" | "file";
  path: string;
  /** The one `model_name_or_path` every prediction names, if they agree. */
  model?: string;
  /** How many predictions the source holds. */
  count: number;
  /** The task ids the source answers. */
  ids: string[];
  /** A key of the whole source's content (shards of one run must share it). */
  key: string;
  /** The task's prediction, or undefined when the source holds none for it. */
  get(taskId: string): Promise<Prediction | undefined>;
}

/** A short content key of an answer: what a finished result is checked against on resume. */
export function answerKey(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

const predictionSchema = z.object({
  instance_id: z.string().min(1, { error: "must name the task (its id)" }),
  model_patch: z.union([z.string(), z.null()], { error: "must be the patch as text (or null for none)" }),
  model_name_or_path: z.string().optional(),
});

function fail(path: string, where: string, message: string): never {
  throw new InvalidArgumentError("--patches", `${path}${where}: ${message}`);
}

function checkRow(value: unknown, path: string, where: string): z.infer<typeof predictionSchema> {
  const parsed = predictionSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.map(String).join(".") || "(prediction)";
  const message =
    issue.code === "invalid_type" && /received undefined/.test(issue.message) ? "is required" : issue.message;
  fail(
    path,
    where,
    `${field}: ${message} (a prediction is {"instance_id", "model_patch", "model_name_or_path"})`,
  );
}

/** Parses a predictions file's text. Pure; errors name the line (JSONL) or index (JSON). */
export function parsePredictionsText(text: string, path: string): Map<string, Prediction> {
  const rows: Array<{ value: unknown; where: string }> = [];
  const lines = (): void => {
    text.split("\n").forEach((line, i) => {
      if (line.trim() === "") return;
      try {
        rows.push({ value: JSON.parse(line) as unknown, where: `:${i + 1}` });
      } catch (error) {
        fail(path, `:${i + 1}`, `not JSON (${(error as Error).message})`);
      }
    });
  };
  let value: unknown;
  if (path.endsWith(".jsonl")) lines();
  else {
    try {
      value = JSON.parse(text) as unknown;
    } catch (error) {
      // A JSONL file under another name: one object a line.
      if (text.trim().split("\n").length < 2) {
        fail(path, "", `not JSON (${(error as Error).message}); give a .json list or a .jsonl file`);
      }
      lines();
    }
  }
  if (value !== undefined) {
    if (Array.isArray(value)) value.forEach((v, i) => rows.push({ value: v, where: `[${i}]` }));
    else if (typeof value === "object" && value !== null) {
      // SWE-bench also accepts an object keyed by instance id.
      for (const [id, v] of Object.entries(value)) {
        const row = typeof v === "object" && v !== null ? { instance_id: id, ...v } : v;
        rows.push({ value: row, where: `[${JSON.stringify(id)}]` });
      }
    } else fail(path, "", "must be a list of predictions, or an object keyed by instance_id");
  }
  const out = new Map<string, Prediction>();
  for (const { value, where } of rows) {
    const row = checkRow(value, path, where);
    if (out.has(row.instance_id)) {
      fail(
        path,
        where,
        `instance_id ${row.instance_id} has a prediction already (${out.get(row.instance_id)!.source})`,
      );
    }
    out.set(row.instance_id, {
      patch: row.model_patch ?? "",
      ...(row.model_name_or_path ? { model: row.model_name_or_path } : {}),
      source: `${path}${where}`,
    });
  }
  return out;
}

/** Opens `--patches PATH`; errors name the flag, the line and the fix. */
export async function loadPredictions(pathArg: string): Promise<Predictions> {
  const path = resolve(pathArg);
  const info = await stat(path).catch(() => undefined);
  if (!info) {
    fail(
      path,
      "",
      "does not exist; give a folder of <task id>.diff files or a predictions .json/.jsonl file",
    );
  }
  if (info.isDirectory()) {
    const files = new Set(await readdir(path));
    const patches = [...files].filter((f) => /\.(diff|patch)$/.test(f)).sort();
    const ids = patches.map((f) => f.replace(/\.(diff|patch)$/, ""));
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (twice.length > 0) {
      fail(
        path,
        "",
        `holds both ${twice[0]}.diff and ${twice[0]}.patch${twice.length > 1 ? ` (and ${twice.length - 1} more such pairs)` : ""}; keep one answer per task`,
      );
    }
    const hash = createHash("sha256");
    for (const f of patches)
      hash
        .update(f)
        .update("\0")
        .update(await readFile(join(path, f)))
        .update("\0");
    return {
      kind: "dir",
      path,
      count: patches.length,
      ids,
      key: hash.digest("hex").slice(0, 16),
      async get(taskId) {
        for (const ext of [".diff", ".patch"]) {
          if (!files.has(`${taskId}${ext}`)) continue;
          return { patch: await readFile(join(path, `${taskId}${ext}`), "utf8"), source: `${taskId}${ext}` };
        }
        return undefined;
      },
    };
  }
  const text = await readFile(path, "utf8");
  const byId = parsePredictionsText(text, path);
  const models = new Set([...byId.values()].map((p) => p.model).filter((m): m is string => !!m));
  return {
    kind: "file",
    path,
    count: byId.size,
    ids: [...byId.keys()],
    key: answerKey(text),
    ...(models.size === 1 ? { model: [...models][0]! } : {}),
    get: async (taskId) => byId.get(taskId),
  };
}
