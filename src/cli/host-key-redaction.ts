import { loadProviderKeys, secretValues } from "../gateway/provider-keys.js";
import { secretRedactor } from "../gateway/redact.js";
import { addLogRedactor } from "../util/log.js";

let added = false;

/**
 * What a CLI verb logs (the audit lines of a person's shell or apply) is redacted as the server's
 * log is: the provider keys in the host's environment never appear. Once per process.
 */
export function redactHostKeys(): void {
  if (added) return;
  added = true;
  addLogRedactor(secretRedactor(secretValues(loadProviderKeys())));
}
