/** USD per million tokens, input and output. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

/** Keyed by a model-name prefix; the longest prefix that fits a model wins. */
export type PriceTable = Record<string, ModelPrice>;

/**
 * List prices of common models (USD per million tokens, as in the price map bundled with the
 * litellm that aider 0.86.2 ships). Cached and batch rates are not modelled:
 * cache reads and writes count at the input rate, so costs err on the high side. Override or add
 * entries with the gateway's `prices` option.
 */
export const DEFAULT_PRICES: PriceTable = {
  "drydock-offline": { inputPerMTok: 0, outputPerMTok: 0 },
  "gpt-4o-mini": { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  "gpt-4o": { inputPerMTok: 2.5, outputPerMTok: 10 },
  "gpt-4.1-nano": { inputPerMTok: 0.1, outputPerMTok: 0.4 },
  "gpt-4.1-mini": { inputPerMTok: 0.4, outputPerMTok: 1.6 },
  "gpt-4.1": { inputPerMTok: 2, outputPerMTok: 8 },
  "gpt-5-nano": { inputPerMTok: 0.05, outputPerMTok: 0.4 },
  "gpt-5-mini": { inputPerMTok: 0.25, outputPerMTok: 2 },
  "gpt-5": { inputPerMTok: 1.25, outputPerMTok: 10 },
  "o3-mini": { inputPerMTok: 1.1, outputPerMTok: 4.4 },
  "o4-mini": { inputPerMTok: 1.1, outputPerMTok: 4.4 },
  o3: { inputPerMTok: 2, outputPerMTok: 8 },
  "claude-3-5-haiku": { inputPerMTok: 0.8, outputPerMTok: 4 },
  "claude-haiku-4-5": { inputPerMTok: 1, outputPerMTok: 5 },
  "claude-3-5-sonnet": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-3-7-sonnet": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-sonnet-4": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-opus-4-5": { inputPerMTok: 5, outputPerMTok: 25 },
  "claude-opus-4-6": { inputPerMTok: 5, outputPerMTok: 25 },
  "claude-opus-4": { inputPerMTok: 15, outputPerMTok: 75 },
  "gemini-2.0-flash": { inputPerMTok: 0.1, outputPerMTok: 0.4 },
  "gemini-2.5-flash-lite": { inputPerMTok: 0.1, outputPerMTok: 0.4 },
  "gemini-2.5-flash": { inputPerMTok: 0.3, outputPerMTok: 2.5 },
  "gemini-2.5-pro": { inputPerMTok: 1.25, outputPerMTok: 10 },
  "gemini-3-pro": { inputPerMTok: 2, outputPerMTok: 12 },
  "gemini-flash-latest": { inputPerMTok: 0.3, outputPerMTok: 2.5 },
};

/** The price for a model name as providers and clients spell it (`openai/gpt-4o`, `models/gemini-2.5-pro`). */
export function priceOf(model: string, table: PriceTable = DEFAULT_PRICES): ModelPrice | undefined {
  const name = model.toLowerCase().replace(/^.*\//, "");
  let best: string | undefined;
  for (const prefix of Object.keys(table)) {
    if (name.startsWith(prefix.toLowerCase()) && (best === undefined || prefix.length > best.length))
      best = prefix;
  }
  return best === undefined ? undefined : table[best];
}

/** Cost in USD of one exchange; undefined when the model has no price. */
export function costUsd(
  model: string,
  tokens: { inputTokens: number; outputTokens: number },
  table: PriceTable = DEFAULT_PRICES,
): number | undefined {
  const price = priceOf(model, table);
  if (!price) return undefined;
  return (tokens.inputTokens * price.inputPerMTok + tokens.outputTokens * price.outputPerMTok) / 1_000_000;
}
