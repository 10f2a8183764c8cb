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

/**
 * A real session on a repository; use with `await using` so a failing test still removes its box.
 * It is returned once the watch of /workspace a session starts when ready has started: tests that
 * run the box's git directly (not through the session, whose diffs take turns) must not race it.
 */
export async function testSession(repo: string, options: Partial<SessionOptions> = {}): Promise<Session> {
  const session = await Session.create(await testEngine(), { repo, image: sandboxImage(), ...options });
  await session.oneDiffAtATime(async () => undefined);
  return session;
}
