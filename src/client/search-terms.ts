/**
 * Tokenizers for ranking repository files: identifiers are split at camelCase, PascalCase,
 * snake_case, kebab-case and digit boundaries so that a query in words ("session store") finds
 * `SessionStore` and `session_store.py`.
 */

const wordPattern = /[\p{L}\p{N}_$]+/gu;
const partPattern = /[A-Z]{2,}(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]+|\p{L}+|\d+/gu;

/** The lower-case parts of one identifier: `parseHTTPResponse` → `parse`, `http`, `response`. */
export function splitIdentifier(identifier: string): string[] {
  return (identifier.match(partPattern) ?? []).map((part) => part.toLowerCase());
}

/** Whole words of a text, lower-cased, identifiers kept intact. */
export function wordTerms(text: string): string[] {
  return (text.match(wordPattern) ?? []).map((word) => word.toLowerCase());
}

/** Only the parts of compound identifiers (`getUserName` → `get`, `user`, `name`); plain words add nothing. */
export function identifierPartTerms(text: string): string[] {
  const terms: string[] = [];
  for (const word of text.match(wordPattern) ?? []) {
    const parts = splitIdentifier(word);
    if (parts.length > 1) terms.push(...parts);
  }
  return terms;
}

/** Whole words and, for compound identifiers, their parts too: the tokenizer for paths and queries. */
export function searchTerms(text: string): string[] {
  const terms: string[] = [];
  for (const word of text.match(wordPattern) ?? []) {
    const parts = splitIdentifier(word);
    terms.push(word.toLowerCase());
    if (parts.length > 1) terms.push(...parts);
  }
  return terms;
}
