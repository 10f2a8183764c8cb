import { inject } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { Session, type SessionOptions } from "../../src/session/session.js";

let engine: Promise<Engine> | undefined;

export function testEngine(): Promise<Engine> {
  engine ??= Engine.connect();
  return engine;
}

export function sandboxImage(): string {
  return inject("sandboxImage");
}

/** A real session on a repository; use with `await using` so a failing test still removes its box. */
export async function testSession(repo: string, options: Partial<SessionOptions> = {}): Promise<Session> {
  return Session.create(await testEngine(), { repo, image: sandboxImage(), ...options });
}
