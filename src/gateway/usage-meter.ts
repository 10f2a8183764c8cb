import { isRecord } from "./chat-request.js";
import { SseReader } from "./sse.js";

/** Token counts as a provider reported them; absent where the response carried none. */
export interface MeteredUsage {
  inputTokens?: number;
  outputTokens?: number;
  /** The model the provider says answered, where it says. */
  model?: string;
}

/** JSON bodies larger than this are not parsed for usage (they are still passed through whole). */
const MAX_JSON_BYTES = 32 * 1024 * 1024;

/**
 * Reads token usage out of a response as it streams past, whatever the provider's shape:
 * OpenAI chat (`usage.prompt_tokens`, last chunk of a stream), OpenAI responses and Anthropic
 * (`usage.input_tokens`, Anthropic's `message_start` then cumulative `message_delta`), Gemini
 * (`usageMetadata`, cumulative per chunk). A later report of a field replaces an earlier one.
 */
export class UsageMeter {
  private readonly sse: SseReader | undefined;
  private json = "";
  private jsonTooLarge = false;
  private readonly usage: MeteredUsage = {};

  constructor(contentType: string | undefined) {
    this.sse = contentType?.includes("text/event-stream") ? new SseReader() : undefined;
  }

  push(chunk: Buffer | string): void {
    const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
    if (this.sse) {
      for (const data of this.sse.push(text)) this.absorb(data);
    } else if (!this.jsonTooLarge) {
      this.json += text;
      if (this.json.length > MAX_JSON_BYTES) {
        this.jsonTooLarge = true;
        this.json = "";
      }
    }
  }

  finish(): MeteredUsage {
    if (this.sse) {
      for (const data of this.sse.flush()) this.absorb(data);
    } else if (this.json) {
      this.absorb(this.json);
      this.json = "";
    }
    return { ...this.usage };
  }

  private absorb(data: string): void {
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return; // `[DONE]`, keep-alives, or a body that is not JSON
    }
    for (const item of Array.isArray(value) ? value : [value]) {
      const found = usageFromObject(item);
      if (found.inputTokens !== undefined) this.usage.inputTokens = found.inputTokens;
      if (found.outputTokens !== undefined) this.usage.outputTokens = found.outputTokens;
      if (found.model !== undefined) this.usage.model = found.model;
    }
  }
}

/** Usage and model from one response object (or stream event) of any supported provider. */
export function usageFromObject(value: unknown): MeteredUsage {
  if (!isRecord(value)) return {};
  const result: MeteredUsage = {};
  const nested = [value, value.message, value.response].filter(isRecord);
  for (const holder of nested) {
    if (typeof holder.model === "string" && holder.model) result.model = holder.model;
    const usage = holder.usage;
    if (!isRecord(usage)) continue;
    const input = sum(
      usage.prompt_tokens,
      usage.input_tokens,
      usage.cache_creation_input_tokens,
      usage.cache_read_input_tokens,
    );
    const output = sum(usage.completion_tokens, usage.output_tokens);
    if (input !== undefined) result.inputTokens = input;
    if (output !== undefined) result.outputTokens = output;
  }
  if (typeof value.modelVersion === "string" && value.modelVersion) result.model = value.modelVersion;
  const gemini = value.usageMetadata;
  if (isRecord(gemini)) {
    const input = sum(gemini.promptTokenCount);
    const output = sum(gemini.candidatesTokenCount, gemini.thoughtsTokenCount);
    if (input !== undefined) result.inputTokens = input;
    if (output !== undefined) result.outputTokens = output;
  }
  return result;
}

function sum(...values: unknown[]): number | undefined {
  const numbers = values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  return numbers.length > 0 ? numbers.reduce((a, b) => a + b, 0) : undefined;
}
