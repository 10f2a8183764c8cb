/**
 * Loads a task file (JSONL), a YAML file, or a directory of YAML files, and makes each task ready
 * to run: host paths resolved against the file's folder, patch files read. Bad tasks come back as
 * problems with their line and field; the good ones still run.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { InvalidArgumentError } from "../util/errors.js";
import { taskHash, type EvalTask } from "./eval-task.js";
import { findClone, type CloneMap } from "./swebench-rows.js";
import {
  parseJsonListTasks,
  parseJsonlTasks,
  parseYamlTasks,
  rejectDuplicateIds,
  type ParsedTasks,
  type ParseOptions,
  type TaskProblem,
} from "./task-parse.js";
import { isGitUrl } from "./repo-source.js";

export interface LoadedTasks {
  tasks: EvalTask[];
  problems: TaskProblem[];
  warnings: TaskProblem[];
}

const YAML = /\.ya?ml$/i;

export interface LoadOptions extends ParseOptions {
  /** Local clones for SWE-bench rows' "owner/name" repos (`--repos`, `--repo`). */
  clones?: CloneMap;
}

/**
 * Reads `path`: a .jsonl (or any non-YAML) file, a .json list, a .yaml/.yml file, or a directory
 * of YAML files. Tasks and SWE-bench rows may be mixed.
 */
export async function loadTasks(path: string, options: LoadOptions = {}): Promise<LoadedTasks> {
  const absolute = resolve(path);
  let info;
  try {
    info = await stat(absolute);
  } catch {
    throw new InvalidArgumentError(
      "TASKS",
      `${absolute} does not exist; give a .jsonl file or a directory of .yaml files`,
    );
  }
  const show = (file: string) => {
    const rel = relative(process.cwd(), file);
    return rel && !rel.startsWith("..") ? rel : file;
  };
  let parsed: ParsedTasks = { tasks: [], problems: [], warnings: [] };
  if (info.isDirectory()) {
    const files = (await readdir(absolute)).filter((f) => YAML.test(f)).sort();
    if (files.length === 0) {
      throw new InvalidArgumentError("TASKS", `${absolute} holds no .yaml or .yml file`);
    }
    for (const file of files) {
      const one = parseYamlTasks(
        await readFile(join(absolute, file), "utf8"),
        show(join(absolute, file)),
        options,
      );
      parsed.tasks.push(...one.tasks);
      parsed.problems.push(...one.problems);
      parsed.warnings.push(...one.warnings);
    }
  } else {
    const text = await readFile(absolute, "utf8");
    parsed = YAML.test(absolute)
      ? parseYamlTasks(text, show(absolute), options)
      : /\.json$/i.test(absolute) && text.trimStart().startsWith("[")
        ? parseJsonListTasks(text, show(absolute), options)
        : parseJsonlTasks(text, show(absolute), options);
  }
  parsed = rejectDuplicateIds(parsed);
  const base = info.isDirectory() ? absolute : dirname(absolute);
  const tasks: EvalTask[] = [];
  const problems = [...parsed.problems];
  for (const { task, source, line, swebench } of parsed.tasks) {
    const where = `${source}${line !== undefined ? `:${line}` : ""}`;
    const fail = (field: string, message: string) =>
      problems.push({ source, line, field, message, id: task.id });
    const ready = { ...task };
    let ok = true;
    if (swebench) {
      const clone = options.clones ? findClone(task.repo, options.clones) : undefined;
      if (clone) ready.repo = clone;
      else {
        fail(
          "repo",
          `no local clone of ${task.repo} is given (nothing is fetched): pass --repos DIR holding DIR/${task.repo.replace("/", "__")} (or DIR/${task.repo}), or --repo ${task.repo}=PATH`,
        );
        ok = false;
      }
    } else if (!isGitUrl(task.repo))
      ready.repo = isAbsolute(task.repo) ? task.repo : resolve(base, task.repo);
    for (const [fileField, textField] of [
      ["patch_file", "patch"],
      ["test_patch_file", "test_patch"],
    ] as const) {
      const file = task[fileField];
      if (file === undefined) continue;
      if (task[textField] !== undefined) {
        fail(fileField, `give ${textField} or ${fileField}, not both`);
        ok = false;
        continue;
      }
      const full = isAbsolute(file) ? file : resolve(base, file);
      try {
        ready[textField] = await readFile(full, "utf8");
        delete ready[fileField];
      } catch (error) {
        fail(
          fileField,
          `cannot read ${full}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
        ok = false;
      }
    }
    if (ok)
      tasks.push({
        ...ready,
        source: where,
        hash: taskHash(ready),
        ...(swebench ? { swebench_row: true } : {}),
      });
  }
  return { tasks, problems, warnings: parsed.warnings };
}
