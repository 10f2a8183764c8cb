import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { dirname } from "node:path";
import { InvalidArgumentError } from "../util/errors.js";
import { chatText, isRecord, requestedModel } from "./chat-request.js";
import type { Provider } from "./providers.js";

/** One line of a record file: a request and the full response it got. */
export interface RecordedExchange {
  v: 1;
  /** `exchangeKey` of the request: what replay looks answers up by. */
  key: string;
  provider: Provider;
  method: string;
  /** The path after the provider prefix, credentials removed from the query. */
  path: string;
  model?: string;
  /** The request body as sent (parsed when JSON), for reading the file; not used to match. */
  request: unknown;
  status: number;
  contentType: string;
  /** Whether `body` is a server-sent event stream, kept as its raw text. */
  streamed: boolean;
  body: string;
  recordedAt: string;
}

/** Top-level request fields that differ between runs of the same call and so are not part of its key. */
const VOLATILE_FIELDS = ["user", "metadata", "stream_options"];

/** Lines of aider's system prompt that change with the day and the machine. */
const VOLATILE_LINES: Array<[RegExp, string]> = [
  [/^- Current date: .*$/gm, "- Current date: <date>"],
  [/^- Platform: .*$/gm, "- Platform: <platform>"],
];

/** Query parameters that carry credentials; removed from recorded paths and keys. */
const CREDENTIAL_PARAMS = ["key", "api_key", "api-key"];

/** The path with credential parameters removed and the rest sorted. */
export function normalizePath(path: string): string {
  const [base = "", query] = path.split("?", 2);
  if (query === undefined) return base;
  const params = new URLSearchParams(query);
  for (const name of CREDENTIAL_PARAMS) params.delete(name);
  params.sort();
  const rest = params.toString();
  return rest ? `${base}?${rest}` : base;
}

/**
 * The canonical form of a request body that decides whether two calls are "the same": JSON with
 * sorted keys, volatile fields dropped and aider's date and platform lines blanked; other bodies
 * as they are.
 */
export function normalizeRequestBody(body: string): string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return body;
  }
  if (isRecord(value)) {
    value = Object.fromEntries(Object.entries(value).filter(([field]) => !VOLATILE_FIELDS.includes(field)));
  }
  return JSON.stringify(canonical(value));
}

function canonical(value: unknown): unknown {
  if (typeof value === "string") {
    return VOLATILE_LINES.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), value);
  }
  if (Array.isArray(value)) return value.map(canonical);
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((field) => [field, canonical(value[field])]),
    );
  }
  return value;
}

/** The key of a request: a hash of provider, method, path and normalized body. */
export function exchangeKey(provider: Provider, method: string, path: string, body: string): string {
  return createHash("sha256")
    .update(`${provider}\n${method.toUpperCase()} ${normalizePath(path)}\n${normalizeRequestBody(body)}`)
    .digest("hex");
}

/** A one-line description of a request for messages: provider, path, model and the prompt's start. */
export function requestSummary(provider: Provider, method: string, path: string, body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const model = requestedModel(parsed);
  const prompt = chatText(parsed).lastUser.replace(/\s+/g, " ").trim();
  const excerpt = prompt.length > 80 ? `${prompt.slice(0, 77)}...` : prompt;
  return [
    `${provider} ${method.toUpperCase()} ${normalizePath(path)}`,
    model ? `model ${model}` : undefined,
    excerpt ? `last user message "${excerpt}"` : undefined,
  ]
    .filter(Boolean)
    .join(", ");
}

/** Appends exchanges to a JSONL file, one line each, in the order they finish. */
export class ExchangeRecorder {
  private queue: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
  }

  append(exchange: RecordedExchange): Promise<void> {
    const line = JSON.stringify(exchange) + "\n";
    this.queue = this.queue.then(() => appendFile(this.file, line, { mode: 0o600 }));
    return this.queue;
  }

  /** Resolves when every append so far is on disk. */
  flush(): Promise<void> {
    return this.queue;
  }
}

/**
 * The answers of a record file, by request key. The same request recorded several times is
 * answered in the recorded order; past the last, the last answer repeats.
 */
export class ReplayBook {
  private readonly answers = new Map<string, RecordedExchange[]>();
  private readonly served = new Map<string, number>();

  private constructor(readonly file: string) {}

  static load(file: string): ReplayBook {
    if (!existsSync(file)) {
      throw new InvalidArgumentError(
        "--llm",
        `replay file ${file} does not exist; make one with --llm record:${file} first`,
      );
    }
    const book = new ReplayBook(file);
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, index) => {
      if (!line.trim()) return;
      let exchange: unknown;
      try {
        exchange = JSON.parse(line);
      } catch (error) {
        throw new InvalidArgumentError(
          "--llm",
          `${file}:${index + 1} is not JSON (${(error as Error).message})`,
        );
      }
      if (!isRecord(exchange) || typeof exchange.key !== "string" || typeof exchange.body !== "string") {
        throw new InvalidArgumentError("--llm", `${file}:${index + 1} is not a recorded exchange`);
      }
      const list = book.answers.get(exchange.key) ?? [];
      list.push(exchange as unknown as RecordedExchange);
      book.answers.set(exchange.key, list);
    });
    return book;
  }

  get size(): number {
    return [...this.answers.values()].reduce((total, list) => total + list.length, 0);
  }

  has(key: string): boolean {
    return (this.answers.get(key)?.length ?? 0) > 0;
  }

  /** The next recorded answer for a key, or undefined when the file has none. */
  take(key: string): RecordedExchange | undefined {
    const list = this.answers.get(key);
    if (!list || list.length === 0) return undefined;
    const index = this.served.get(key) ?? 0;
    this.served.set(key, index + 1);
    return list[Math.min(index, list.length - 1)];
  }
}
