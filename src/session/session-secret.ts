/**
 * A session's secret: what a client must show, besides the session's id, to take up a kept
 * session that no client holds (after a restart, or after its own connection ended). Ids are
 * shown in logs, listings and replies; the secret is given once, to the client that created the
 * session, and the host keeps only its SHA-256 in the session record. Pure.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A new secret: 32 random bytes, base64url. */
export function newSessionSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** What the session record holds in place of the secret. */
export function sessionSecretHash(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** Whether a given secret is the one whose hash was recorded; false when none was (an older record). */
export function sessionSecretMatches(given: string, recordedHash: string | undefined): boolean {
  if (recordedHash === undefined || !/^[0-9a-f]{64}$/.test(recordedHash)) return false;
  return timingSafeEqual(Buffer.from(sessionSecretHash(given), "hex"), Buffer.from(recordedHash, "hex"));
}
