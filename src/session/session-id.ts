import { randomBytes } from "node:crypto";

/** A new session id: 12 hex digits, also the box's name suffix and its gateway directory's name. */
export function newSessionId(): string {
  return randomBytes(6).toString("hex");
}
