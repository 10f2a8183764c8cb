/**
 * What the bridge asks of a memory system when it looks for files relevant to a query (the IDL's
 * MemorySystem). Plug in your own, or use the default {@link RepoMemory}.
 */

/** The question put to the memory system (the IDL's ContextGenerationInput). */
export interface ContextGenerationInput {
  /** What the task is about, in words or identifiers. */
  query: string;
  /** At most this many files; the memory system's own default when absent. */
  maxResults?: number;
}

/** One relevant file: an absolute path or one relative to the repository. */
export interface ContextMatch {
  path: string;
  /** Higher is more relevant; scale is the memory system's own. */
  relevance?: number;
}

/** The memory system's answer (the IDL's AssociativeMatchResult), most relevant first. */
export interface AssociativeMatchResult {
  /** A short human-readable summary of what was found. */
  contextSummary?: string;
  matches: ContextMatch[];
  /** Set when the lookup failed; `matches` is then empty. */
  error?: string;
}

/** Finds files relevant to a query. */
export interface MemorySystem {
  getRelevantContextFor(input: ContextGenerationInput): Promise<AssociativeMatchResult>;
}
