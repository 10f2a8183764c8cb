import type { ExchangeEvent } from "../../gateway/index.js";

/** What one aider call cost, added up from the gateway's exchange events while it ran. */
export interface CallUsage {
  /** Model calls answered (refused ones are not counted). */
  requests: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Messages of calls the gateway refused, in order. */
  refusals: string[];
}

export class UsageTally {
  private readonly usage: CallUsage = {
    requests: 0,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    refusals: [],
  };

  add(event: ExchangeEvent): void {
    if (event.refusal) {
      this.usage.refusals.push(event.refusal.message);
      return;
    }
    this.usage.requests += 1;
    this.usage.inputTokens += event.inputTokens;
    this.usage.outputTokens += event.outputTokens;
    this.usage.costUsd += event.costUsd;
  }

  totals(): CallUsage {
    return { ...this.usage, refusals: [...this.usage.refusals] };
  }
}
