/**
 * A box that goes ends every stream the host holds open to it: a terminal, an idle shell's
 * terminal and a plain exec that still run when the box is removed, whether drydock removes it or something outside does. Under
 * runsc the engine itself may leave such a stream open for good, which kept `drydock run` from
 * exiting and left a session's calls unanswered after `docker rm -f` (this file runs under both
 * runtimes).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { BoxGoneError } from "../../src/util/errors.js";
import { Box } from "../../src/sandbox/box.js";
import { sandboxImage, testEngine } from "../helpers/sessions.js";

const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} still open after ${ms} ms`)), ms),
    ),
  ]);

describe("streams to a box that goes", () => {
  for (const remover of ["drydock", "outside"] as const) {
    it(`end when the box is removed by ${remover}, several boxes in a row`, async () => {
      const engine = await testEngine();
      for (let round = 0; round < 3; round++) {
        const box = await Box.create(engine, randomBytes(6).toString("hex"), { image: sandboxImage() });
        try {
          const terminal = await engine.openTerminal(box.id, ["sleep", "1001"], { input: true });
          const shell = await engine.openTerminal(box.id, ["bash", "--norc"], { input: true });
          const stdin = new PassThrough();
          const exec = engine.exec(box.id, ["sleep", "1002"], { stdin, timeoutMs: 600_000 });
          // Either way it settles: with the killed program's status, or with the box gone.
          const execSettled = exec.then(
            (result) => `exit ${result.exitCode}`,
            (error: unknown) => (error instanceof BoxGoneError ? "box gone" : error),
          );
          // Both programs are running before the box goes.
          for (let tries = 0; ; tries++) {
            const ps = await engine.exec(box.id, ["pgrep", "-c", "-f", "^sleep 100[12]$"]);
            if (ps.stdout.toString().trim() === "2") break;
            if (tries > 50) throw new Error(`the two sleeps did not start: ${ps.stdout.toString()}`);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          if (remover === "drydock") await box.remove();
          else execFileSync("docker", ["rm", "-f", box.id]);
          await within(terminal.ended, 15_000, "the terminal");
          await within(shell.ended, 15_000, "the idle shell's terminal");
          expect(await within(execSettled, 15_000, "the exec")).toMatch(/^(exit 137|box gone)$/);
          stdin.destroy();
        } finally {
          await box.remove();
        }
      }
    });
  }
});
