import { describe, expect, it } from "vitest";
import {
  aiderEnv,
  chooseAiderModel,
  DUMMY_KEY,
  OFFLINE_AIDER_MODEL,
  OFFLINE_MODEL_METADATA,
  providerOfModel,
} from "../../../src/gateway/aider-env.js";
import type { ProviderKeys } from "../../../src/gateway/provider-keys.js";

const key = (envName: string) => ({ value: "secret-value-123", envName });
const live = { kind: "live" } as const;

describe("providerOfModel", () => {
  it.each([
    ["gpt-4o", "openai"],
    ["openai/gpt-4.1-mini", "openai"],
    ["o3-mini", "openai"],
    ["4o", "openai"],
    ["sonnet", "anthropic"],
    ["claude-3-7-sonnet-20250219", "anthropic"],
    ["anthropic/claude-sonnet-4-5", "anthropic"],
    ["gemini/gemini-2.5-pro", "gemini"],
    ["flash", "gemini"],
    ["gemini-2.5-flash", "gemini"],
    ["drydock-offline", "offline"],
    ["openai/drydock-offline", "offline"],
    ["openrouter/anthropic/claude-sonnet-4", undefined],
    ["deepseek", undefined],
    ["llama3", undefined],
  ])("%s belongs to %s", (model, provider) => {
    expect(providerOfModel(model)).toBe(provider);
  });
});

describe("chooseAiderModel", () => {
  it("refuses, naming the key variables and the offline model, when no model is asked for and the host has no key", () => {
    expect(() => chooseAiderModel({ keys: {}, mode: live })).toThrow(
      /^model: no model provider key on the host.*ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY.*--keys-file.*openai\/drydock-offline.*--llm offline/,
    );
    expect(() => chooseAiderModel({ keys: {}, mode: { kind: "record", file: "/tmp/x.jsonl" } })).toThrow(
      /no model provider key/,
    );
  });

  it("uses the offline model when it is asked for: by name, or with --llm offline", () => {
    expect(chooseAiderModel({ keys: {}, mode: live, requested: OFFLINE_AIDER_MODEL })).toMatchObject({
      model: OFFLINE_AIDER_MODEL,
      offline: true,
    });
    expect(chooseAiderModel({ keys: {}, mode: { kind: "offline" } })).toMatchObject({ offline: true });
  });

  it("picks aider's default for the first key the host holds: Anthropic, then OpenAI, then Gemini", () => {
    const keys: ProviderKeys = { openai: key("OPENAI_API_KEY"), gemini: key("GEMINI_API_KEY") };
    expect(chooseAiderModel({ keys, mode: live })).toMatchObject({
      model: "gpt-4o",
      provider: "openai",
      offline: false,
    });
    expect(
      chooseAiderModel({ keys: { ...keys, anthropic: key("ANTHROPIC_API_KEY") }, mode: live }).model,
    ).toBe("sonnet");
    expect(chooseAiderModel({ keys: { gemini: key("GOOGLE_API_KEY") }, mode: live }).model).toBe(
      "gemini/gemini-2.5-pro",
    );
  });

  it("uses a model asked for when its provider's key is there", () => {
    const choice = chooseAiderModel({
      requested: "claude-sonnet-4-5",
      keys: { anthropic: key("ANTHROPIC_API_KEY") },
      mode: live,
    });
    expect(choice).toMatchObject({ model: "claude-sonnet-4-5", provider: "anthropic", offline: false });
  });

  it("gives a bare Gemini name litellm's gemini/ prefix (it would read it as Vertex AI)", () => {
    expect(
      chooseAiderModel({ requested: "gemini-2.5-flash", keys: { gemini: key("GEMINI_API_KEY") }, mode: live })
        .model,
    ).toBe("gemini/gemini-2.5-flash");
  });

  it("refuses a model whose key is missing, naming the variable and the offline model", () => {
    expect(() => chooseAiderModel({ requested: "gpt-4o", keys: {}, mode: live })).toThrow(
      /gpt-4o needs OPENAI_API_KEY on the host .* or use openai\/drydock-offline/,
    );
    expect(() => chooseAiderModel({ requested: "gemini/gemini-2.5-pro", keys: {}, mode: live })).toThrow(
      /GEMINI_API_KEY or GOOGLE_API_KEY/,
    );
  });

  it("needs no key in replay mode", () => {
    expect(
      chooseAiderModel({ requested: "gpt-4o", keys: {}, mode: { kind: "replay", file: "/f" } }).model,
    ).toBe("gpt-4o");
  });

  it("refuses a provider the gateway does not route, and a real model in offline mode", () => {
    expect(() => chooseAiderModel({ requested: "openrouter/x/y", keys: {}, mode: live })).toThrow(
      /not a model the gateway can route/,
    );
    expect(() =>
      chooseAiderModel({
        requested: "gpt-4o",
        keys: { openai: key("OPENAI_API_KEY") },
        mode: { kind: "offline" },
      }),
    ).toThrow(/--llm offline/);
    expect(
      chooseAiderModel({ keys: { openai: key("OPENAI_API_KEY") }, mode: { kind: "offline" } }).offline,
    ).toBe(true);
  });
});

describe("aiderEnv", () => {
  it("points every provider at the relay with dummy keys, and the offline model at /offline with the diff format", () => {
    const env = aiderEnv({
      port: 4141,
      choice: chooseAiderModel({ keys: {}, mode: live, requested: OFFLINE_AIDER_MODEL }),
      modelMetadataFile: "/run/drydock/model-metadata.json",
    });
    expect(env).toMatchObject({
      AIDER_MODEL: "openai/drydock-offline",
      OPENAI_API_BASE: "http://127.0.0.1:4141/offline/v1",
      OPENAI_API_KEY: DUMMY_KEY,
      ANTHROPIC_API_BASE: "http://127.0.0.1:4141/anthropic",
      ANTHROPIC_API_KEY: DUMMY_KEY,
      GEMINI_API_BASE: "http://127.0.0.1:4141/gemini/v1beta",
      GEMINI_API_KEY: DUMMY_KEY,
      AIDER_EDIT_FORMAT: "diff",
      AIDER_SHOW_MODEL_WARNINGS: "false",
      AIDER_MODEL_METADATA_FILE: "/run/drydock/model-metadata.json",
      AIDER_CHECK_UPDATE: "false",
      AIDER_ANALYTICS_DISABLE: "true",
    });
    expect(Object.keys(OFFLINE_MODEL_METADATA)).toEqual([env.AIDER_MODEL]);
  });

  it("leaves the edit format to aider for a real model and carries no secret", () => {
    const keys: ProviderKeys = { openai: key("OPENAI_API_KEY") };
    const env = aiderEnv({ port: 4141, choice: chooseAiderModel({ keys, mode: live }) });
    expect(env.OPENAI_API_BASE).toBe("http://127.0.0.1:4141/openai/v1");
    expect(env.AIDER_EDIT_FORMAT).toBeUndefined();
    expect(env.AIDER_MODEL_METADATA_FILE).toBeUndefined();
    expect(JSON.stringify(env)).not.toContain("secret-value-123");
  });
});
