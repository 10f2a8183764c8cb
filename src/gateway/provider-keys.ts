import { readFileSync } from "node:fs";
import { parse } from "dotenv";
import { InvalidArgumentError } from "../util/errors.js";
import { KEY_ENV_NAMES, UPSTREAM_PROVIDERS, type UpstreamProvider } from "./providers.js";

/** The real provider keys the host holds; a provider without a key is absent. */
export type ProviderKeys = Partial<Record<UpstreamProvider, ProviderKey>>;

export interface ProviderKey {
  value: string;
  /** The variable it came from, e.g. `GEMINI_API_KEY`, for messages (never the value). */
  envName: string;
}

/**
 * Reads provider keys from the environment and, where given, a `.env` file. The environment wins
 * over the file, as with dotenv. Empty values count as absent.
 */
export function loadProviderKeys(options: { env?: NodeJS.ProcessEnv; envFile?: string } = {}): ProviderKeys {
  const env = options.env ?? process.env;
  let fromFile: Record<string, string> = {};
  if (options.envFile !== undefined) {
    try {
      fromFile = parse(readFileSync(options.envFile));
    } catch (error) {
      throw new InvalidArgumentError(
        "env file",
        `${options.envFile} could not be read (${(error as Error).message}); pass an existing .env file or none`,
      );
    }
  }
  const keys: ProviderKeys = {};
  for (const provider of UPSTREAM_PROVIDERS) {
    for (const envName of KEY_ENV_NAMES[provider]) {
      const value = (env[envName] || fromFile[envName] || "").trim();
      if (value) {
        keys[provider] = { value, envName };
        break;
      }
    }
  }
  return keys;
}

/** Every secret value among the keys, for redaction. */
export function secretValues(keys: ProviderKeys): string[] {
  return Object.values(keys).map((key) => key.value);
}
