/** Values shorter than this are not treated as secrets: redacting "x" would mangle every text. */
export const MIN_SECRET_LENGTH = 8;

export const REDACTED = "[redacted]";

/** Replaces every occurrence of each secret in `text` (also its URL-encoded form) with `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  return secretRedactor(secrets)(text);
}

/** A redactor bound to a set of secrets, e.g. for `addLogRedactor` or a tool's output. */
export function secretRedactor(secrets: readonly string[]): (text: string) => string {
  const ordered = secretForms(secrets);
  return (text) => {
    let out = text;
    for (const form of ordered) out = out.split(form).join(REDACTED);
    return out;
  };
}

/** Each secret long enough to count, plain and URL-encoded, longest first (so a secret that contains another is replaced whole). */
function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * Redacts secrets from text that arrives in pieces: a secret split across pieces is still found,
 * because the end of each piece that could begin a secret is held back until the next one.
 */
export class StreamRedactor {
  private readonly forms: string[];
  private readonly redact: (text: string) => string;
  private carry = "";

  constructor(secrets: readonly string[]) {
    this.forms = secretForms(secrets);
    this.redact = secretRedactor(secrets);
  }

  /** The part of the text seen so far that can be passed on. */
  push(text: string): string {
    const all = this.redact(this.carry + text);
    let hold = 0;
    for (const form of this.forms) {
      for (let n = Math.min(form.length - 1, all.length); n > hold; n--) {
        if (all.endsWith(form.slice(0, n))) {
          hold = n;
          break;
        }
      }
    }
    this.carry = all.slice(all.length - hold);
    return all.slice(0, all.length - hold);
  }

  /** Whatever was held back, at the end of the stream. */
  flush(): string {
    const rest = this.carry;
    this.carry = "";
    return rest;
  }
}
