import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LlmGateway, type LlmGatewayOptions } from "../../../src/gateway/gateway.js";
import type { ProviderKeys } from "../../../src/gateway/provider-keys.js";
import type { FakeUpstream } from "./fake-upstream.js";

export const REAL_KEYS: ProviderKeys = {
  openai: { value: "sk-real-openai-0123456789", envName: "OPENAI_API_KEY" },
  anthropic: { value: "sk-ant-real-anthropic-0123456789", envName: "ANTHROPIC_API_KEY" },
  gemini: { value: "AIza-real-gemini-0123456789", envName: "GEMINI_API_KEY" },
};

/** A temp directory standing in for a session's host dir; removed on dispose. */
export function tempDir(): { path: string } & Disposable {
  const path = mkdtempSync(join(tmpdir(), "drydock-gw-"));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

/** A gateway on a unix socket in `dir`, forwarding every provider to `upstream`. */
export function startGateway(
  dir: string,
  upstream: FakeUpstream | undefined,
  options: Partial<LlmGatewayOptions> = {},
): Promise<LlmGateway> {
  return LlmGateway.start({
    socketPath: join(dir, "run", "llm.sock"),
    keys: REAL_KEYS,
    ...(upstream
      ? {
          upstreams: { openai: upstream.url, anthropic: upstream.url, gemini: upstream.url },
          allowedHosts: [upstream.host],
        }
      : {}),
    ...options,
  });
}
