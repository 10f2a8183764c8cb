import { describe, expect, it } from "vitest";
import { loadProviderKeys, secretValues } from "../../../src/gateway/provider-keys.js";
import { redactSecrets, secretRedactor, StreamRedactor } from "../../../src/gateway/redact.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./gateway-fixture.js";

describe("redactSecrets", () => {
  it("replaces every occurrence of each secret, plain and URL-encoded", () => {
    const secret = "sk-abc/def+ghi=123";
    const text = `key=${secret} again ${secret} in a url ?key=${encodeURIComponent(secret)}`;
    expect(redactSecrets(text, [secret])).toBe("key=[redacted] again [redacted] in a url ?key=[redacted]");
  });

  it("replaces a longer secret whole when it contains a shorter one", () => {
    expect(redactSecrets("AAAAAAAABBBB", ["AAAAAAAA", "AAAAAAAABBBB"])).toBe("[redacted]");
  });

  it("leaves values too short to be keys alone, and text without secrets unchanged", () => {
    expect(redactSecrets("a dummy x key", ["x", "dummy"])).toBe("a dummy x key");
    expect(secretRedactor([])("nothing to hide")).toBe("nothing to hide");
  });
});

describe("StreamRedactor", () => {
  it("finds a secret split across pieces, holding back only what could begin one", () => {
    const secret = "sk-stream-0123456789";
    const redactor = new StreamRedactor([secret]);
    const pieces = ["data: sk-str", "eam-01234", "56789 done\n\n", "plain sk", "-other text"];
    const out = pieces.map((p) => redactor.push(p));
    expect(out[0]).toBe("data: ");
    expect(out[2]).toBe("[redacted] done\n\n");
    expect(out.join("") + redactor.flush()).toBe("data: [redacted] done\n\nplain sk-other text");
    for (let cut = 1; cut < 40; cut++) {
      const text = `a ${secret} b ${encodeURIComponent(secret)}`;
      const r = new StreamRedactor([secret]);
      expect(r.push(text.slice(0, cut)) + r.push(text.slice(cut)) + r.flush()).toBe(
        "a [redacted] b [redacted]",
      );
    }
  });
});

describe("loadProviderKeys", () => {
  it("takes keys from the environment over a .env file, and GOOGLE_API_KEY for Gemini", () => {
    using dir = tempDir();
    const envFile = join(dir.path, ".env");
    writeFileSync(envFile, "OPENAI_API_KEY=from-file-openai\nANTHROPIC_API_KEY=from-file-anthropic\n");
    const keys = loadProviderKeys({
      env: { OPENAI_API_KEY: "from-env-openai", GOOGLE_API_KEY: "from-env-google", ANTHROPIC_API_KEY: "" },
      envFile,
    });
    expect(keys).toEqual({
      openai: { value: "from-env-openai", envName: "OPENAI_API_KEY" },
      anthropic: { value: "from-file-anthropic", envName: "ANTHROPIC_API_KEY" },
      gemini: { value: "from-env-google", envName: "GOOGLE_API_KEY" },
    });
    expect(secretValues(keys).sort()).toEqual(["from-env-google", "from-env-openai", "from-file-anthropic"]);
  });

  it("names the .env file it cannot read", () => {
    expect(() => loadProviderKeys({ env: {}, envFile: "/nonexistent/.env" })).toThrow(
      /\/nonexistent\/\.env could not be read/,
    );
  });
});

describe("a running gateway", () => {
  it("redacts its keys from every log line until it closes", async () => {
    const { addLogSink, logger } = await import("../../../src/util/log.js");
    const { startGateway, REAL_KEYS } = await import("./gateway-fixture.js");
    const key = REAL_KEYS.openai?.value ?? "";
    const seen: string[] = [];
    const removeSink = addLogSink((record) => seen.push(record.message));
    try {
      using dir = tempDir();
      const gateway = await startGateway(dir.path, undefined);
      logger("test").warn(`leaked ${key}`);
      await gateway.close();
      logger("test").warn(`after ${key}`);
    } finally {
      removeSink();
    }
    expect(seen).toContain("leaked [redacted]");
    expect(seen).toContain(`after ${key}`);
  });
});
