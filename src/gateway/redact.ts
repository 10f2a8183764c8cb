/** Values shorter than this are not treated as secrets: redacting "x" would mangle every text. */
export const MIN_SECRET_LENGTH = 8;

export const REDACTED = "[redacted]";

/** Replaces every occurrence of each secret in `text` (also its URL-encoded form) with `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  return secretRedactor(secrets)(text);
}

/** A redactor bound to a set of secrets, e.g. for `addLogRedactor` or a tool's output. */
export function secretRedactor(secrets: readonly string[]): (text: string) => string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
  }
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const form of ordered) out = out.split(form).join(REDACTED);
    return out;
  };
}
