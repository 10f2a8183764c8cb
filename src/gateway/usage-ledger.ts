import { LimitExceededError } from "../util/errors.js";
import { costUsd, DEFAULT_PRICES, type PriceTable } from "./prices.js";

/** Per-session budgets; absent means unlimited. */
export interface LlmLimits {
  /** Model calls the session may make (`--max-llm-requests`). */
  maxRequests?: number;
  /** USD the session may spend (`--max-llm-cost-usd`); checked before each call, so the call that crosses it completes. */
  maxCostUsd?: number;
}

export interface ModelUsage {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface UsageTotals extends ModelUsage {
  /** Calls refused by the gateway (limits, allowlist, missing key, replay miss); not in `requests`. */
  refused: number;
  byModel: Record<string, ModelUsage>;
  /** Models used that have no price: their cost counts as 0, so a cost limit cannot see them. */
  unpricedModels: string[];
}

/** Counts a session's model calls, tokens and cost, and says no once a limit is reached. */
export class UsageLedger {
  private readonly total: ModelUsage = { requests: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
  private refused = 0;
  private readonly byModel = new Map<string, ModelUsage>();
  private readonly unpriced = new Set<string>();

  constructor(
    private readonly limits: LlmLimits = {},
    private readonly prices: PriceTable = DEFAULT_PRICES,
  ) {}

  /** Admits one call (counting it at once, so concurrent calls cannot pass a limit together) or throws. */
  admit(): void {
    const { maxRequests, maxCostUsd } = this.limits;
    if (maxRequests !== undefined && this.total.requests >= maxRequests) {
      throw new LimitExceededError(
        `LLM request limit reached: this session has made ${this.total.requests} of the ${maxRequests} model calls allowed by --max-llm-requests. Raise --max-llm-requests or start a new session`,
      );
    }
    if (maxCostUsd !== undefined && this.total.costUsd >= maxCostUsd) {
      throw new LimitExceededError(
        `LLM cost limit reached: this session has spent $${this.total.costUsd.toFixed(4)} of the $${maxCostUsd} allowed by --max-llm-cost-usd. Raise --max-llm-cost-usd or start a new session`,
      );
    }
    this.total.requests += 1;
  }

  /** Takes back an admitted call that never reached anyone (the upstream could not be reached). */
  cancel(): void {
    this.total.requests = Math.max(0, this.total.requests - 1);
  }

  /** Counts a call the gateway refused. */
  refuse(): void {
    this.refused += 1;
  }

  /** Adds the tokens of an admitted call; returns its cost (0 when the model has no price). */
  settle(
    model: string,
    tokens: { inputTokens: number; outputTokens: number },
  ): { costUsd: number; priced: boolean } {
    const cost = costUsd(model, tokens, this.prices);
    if (cost === undefined) this.unpriced.add(model);
    const usd = cost ?? 0;
    this.total.inputTokens += tokens.inputTokens;
    this.total.outputTokens += tokens.outputTokens;
    this.total.costUsd += usd;
    const entry = this.byModel.get(model) ?? { requests: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
    entry.requests += 1;
    entry.inputTokens += tokens.inputTokens;
    entry.outputTokens += tokens.outputTokens;
    entry.costUsd += usd;
    this.byModel.set(model, entry);
    return { costUsd: usd, priced: cost !== undefined };
  }

  totals(): UsageTotals {
    return {
      ...this.total,
      refused: this.refused,
      byModel: Object.fromEntries([...this.byModel].map(([model, usage]) => [model, { ...usage }])),
      unpricedModels: [...this.unpriced].sort(),
    };
  }
}
