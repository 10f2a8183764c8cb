export { LlmGateway, type ExchangeEvent, type LlmGatewayOptions } from "./gateway.js";
export { parseLlmMode, formatLlmMode, type LlmMode } from "./llm-mode.js";
export {
  OfflineModel,
  OFFLINE_MODEL,
  DEFAULT_SCRIPT_PATH,
  type OfflineAnswer,
  type OfflineRequest,
} from "./offline-model.js";
export {
  loadOfflineScript,
  parseOfflineScript,
  type OfflineScript,
  type OfflineRule,
} from "./offline-script.js";
export { MockLlmServer, type MockLlmServerOptions } from "./mock-llm-server.js";
export {
  aiderEnv,
  chooseAiderModel,
  hasKeyFor,
  providerOfModel,
  relayBaseUrl,
  DUMMY_KEY,
  OFFLINE_AIDER_MODEL,
  OFFLINE_MODEL_METADATA,
  type AiderModelChoice,
} from "./aider-env.js";
export { loadProviderKeys, secretValues, type ProviderKeys, type ProviderKey } from "./provider-keys.js";
export { redactSecrets, secretRedactor } from "./redact.js";
export { DEFAULT_PRICES, costUsd, priceOf, type PriceTable, type ModelPrice } from "./prices.js";
export type { LlmLimits, UsageTotals, ModelUsage } from "./usage-ledger.js";
export { ReplayBook, ExchangeRecorder, exchangeKey, type RecordedExchange } from "./record-replay.js";
export {
  DEFAULT_ALLOWED_HOSTS,
  DEFAULT_UPSTREAMS,
  type Provider,
  type UpstreamProvider,
} from "./providers.js";
