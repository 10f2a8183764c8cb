/**
 * The shapes the file-context helpers return. Keys are those of the AiderBridge IDL's JSON
 * (snake_case), so an orchestrator written against that interface reads them unchanged.
 */

/** Where the current file context came from. */
export type ContextSource = "explicit_specification" | "associative_matching";

/** What `setFileContext` did. */
export interface SetFileContextResult {
  /** `success`: every path kept; `warning`: some dropped; `error`: none of the given paths kept. */
  status: "success" | "warning" | "error";
  /** How many files the context now holds. */
  file_count: number;
  context_source: ContextSource;
  /** Which paths were dropped and why; absent when none were. */
  message?: string;
}

/** The bridge's current file context. */
export interface FileContext {
  /** Absolute (resolved) paths. */
  file_paths: string[];
  file_count: number;
  /** Null until a context has been set. */
  context_source: ContextSource | null;
}
