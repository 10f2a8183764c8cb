import { resolve } from "node:path";
import { InvalidArgumentError } from "../util/errors.js";

/**
 * How the gateway answers model calls:
 * - `live`: forward to the real providers (keys from the host), the offline model under /offline;
 * - `offline`: never contact a provider; the offline model answers every OpenAI-shaped call;
 * - `record`: as live, and append every exchange to a JSONL file;
 * - `replay`: answer only from such a file, with no upstream at all.
 */
export type LlmMode =
  | { kind: "live" }
  | { kind: "offline" }
  | { kind: "record"; file: string }
  | { kind: "replay"; file: string };

const USAGE = "use live, offline, record:FILE or replay:FILE";

/** Parses a `--llm` value; relative files resolve against `cwd`. */
export function parseLlmMode(spec: string, cwd: string = process.cwd()): LlmMode {
  const text = spec.trim();
  if (text === "live" || text === "offline") return { kind: text };
  const colon = text.indexOf(":");
  if (colon < 0) {
    throw new InvalidArgumentError("--llm", `${JSON.stringify(spec)} is not a mode; ${USAGE}`);
  }
  const kind = text.slice(0, colon);
  const file = text.slice(colon + 1).trim();
  if (kind !== "record" && kind !== "replay") {
    throw new InvalidArgumentError(
      "--llm",
      `unknown mode ${JSON.stringify(kind)} in ${JSON.stringify(spec)}; ${USAGE}`,
    );
  }
  if (!file) {
    throw new InvalidArgumentError("--llm", `${kind}: needs a file, e.g. ${kind}:llm-exchanges.jsonl`);
  }
  return { kind, file: resolve(cwd, file) };
}

/** The spec string for a mode, as `--llm` would take it. */
export function formatLlmMode(mode: LlmMode): string {
  return mode.kind === "record" || mode.kind === "replay" ? `${mode.kind}:${mode.file}` : mode.kind;
}
