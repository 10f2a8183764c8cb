/**
 * The files of an aider call, confined to /workspace: relative paths (as the seed's clients send
 * them) or absolute ones under /workspace, normalised to paths relative to the repository root.
 */
import { relativeToWorkspace, resolveWorkspacePath } from "../../sandbox/workspace-path.js";
import { InvalidArgumentError } from "../../util/errors.js";

export interface AiderFiles {
  /** Relative to /workspace, each once, in the order given. */
  editable: string[];
  /** Relative to /workspace; files that are also editable are left out (editing implies reading). */
  readonly: string[];
}

/** Throws PathOutsideWorkspaceError or InvalidArgumentError naming the field and the index. */
export function aiderFiles(editable: readonly string[], readonly: readonly string[] = []): AiderFiles {
  if (editable.length === 0) {
    throw new InvalidArgumentError(
      "relative_editable_files",
      "is empty; name at least one file aider may edit (a new file is created)",
    );
  }
  const edit = unique(editable.map((path, i) => relative(path, `relative_editable_files[${i}]`)));
  const editSet = new Set(edit);
  const read = unique(readonly.map((path, i) => relative(path, `relative_readonly_files[${i}]`))).filter(
    (path) => !editSet.has(path),
  );
  return { editable: edit, readonly: read };
}

function relative(path: string, field: string): string {
  const rel = relativeToWorkspace(resolveWorkspacePath(path, field));
  if (rel === "") throw new InvalidArgumentError(field, "is the repository root; name a file in it");
  if (rel === ".git" || rel.startsWith(".git/")) {
    throw new InvalidArgumentError(
      field,
      `${JSON.stringify(path)} is inside .git; name a file of the repository`,
    );
  }
  return rel;
}

function unique(paths: string[]): string[] {
  return [...new Set(paths)];
}
