import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  newSessionSecret,
  sessionSecretHash,
  sessionSecretMatches,
} from "../../../src/session/session-secret.js";

describe("a session's secret", () => {
  it("is 32 random bytes, and only its SHA-256 is kept", () => {
    const secret = newSessionSecret();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newSessionSecret()).not.toBe(secret);
    expect(sessionSecretHash(secret)).toBe(createHash("sha256").update(secret).digest("hex"));
  });

  it("matches only the secret whose hash was recorded, and nothing when none was", () => {
    const secret = newSessionSecret();
    const hash = sessionSecretHash(secret);
    expect(sessionSecretMatches(secret, hash)).toBe(true);
    expect(sessionSecretMatches(`${secret} `, hash)).toBe(false);
    expect(sessionSecretMatches(hash, hash)).toBe(false);
    expect(sessionSecretMatches(secret, undefined)).toBe(false);
    expect(sessionSecretMatches(secret, "not-a-hash")).toBe(false);
    expect(sessionSecretMatches("", sessionSecretHash(""))).toBe(true);
  });
});
