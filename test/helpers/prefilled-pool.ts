import { SessionManager } from "../../src/session/session-manager.js";
import { sandboxImage, testEngine } from "./sessions.js";

/** A manager whose pool of one box is prefilled with `repo` and full before `body` runs; every box goes after it. */
export async function withPrefilledPool(
  repo: string,
  body: (manager: SessionManager) => Promise<void>,
): Promise<void> {
  const manager = await SessionManager.start(await testEngine(), {
    pool: { size: 1, profile: { image: sandboxImage() }, prefillRepo: repo },
  });
  try {
    await manager.pool!.full();
    await body(manager);
  } finally {
    await manager.closeAll();
  }
}
