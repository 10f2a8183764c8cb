/**
 * The Docker engine as a BoxEngine: a terminal is opened through the interface alone, as a
 * session's shell would be on any backend.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { BoxEngine } from "../../src/engine/box-engine.js";
import { Box } from "../../src/sandbox/box.js";
import { sandboxImage, testEngine } from "../helpers/sessions.js";

describe("Engine as a BoxEngine", () => {
  it("runs a program on a terminal in a box and reports its exit status", async () => {
    const engine = await testEngine();
    await using box = await Box.create(engine, randomBytes(6).toString("hex"), { image: sandboxImage() });
    const backend: BoxEngine = engine;
    const terminal = await backend.openTerminal(
      box.id,
      ["bash", "-c", 'test -t 1 && printf "on a tty"; exit 3'],
      {
        user: "1000",
      },
    );
    let output = "";
    terminal.onData((chunk) => (output += chunk.toString("utf8")));
    await terminal.ended;
    expect(output).toContain("on a tty");
    expect(await terminal.exitCode()).toBe(3);
    expect((await backend.listBoxes("drydock.session", box.sessionId)).map((b) => b.id)).toEqual([box.id]);
  });
});
