import { snippetAround } from "./snippet.js";

/** The outcome of one text edit: the new file content and where the change landed. */
export interface TextEdit {
  /** The whole new content, ready to write back. */
  readonly text: string;
  /** First and last line (1-based) of the new text that the edit wrote. */
  readonly startLine: number;
  readonly endLine: number;
  /** Numbered lines around the change, for the reply. */
  readonly snippet: string;
}

/** Builds a TextEdit with its snippet. */
export function textEdit(text: string, startLine: number, endLine: number): TextEdit {
  return { text, startLine, endLine, snippet: snippetAround(text, startLine, endLine) };
}
