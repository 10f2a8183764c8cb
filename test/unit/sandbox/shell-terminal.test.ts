import { describe, expect, it } from "vitest";
import type { TerminalExec } from "../../../src/engine/exec-terminal.js";
import { ShellTerminal } from "../../../src/sandbox/shell-terminal.js";

/** A terminal exec driven by the test: what it "receives" is pushed in, its end is set by hand. */
function scriptedExec() {
  let listener: ((chunk: Buffer) => void) | undefined;
  let end!: () => void;
  let code: number | null = null;
  const written: string[] = [];
  let closed = false;
  const ended = new Promise<void>((resolve) => (end = resolve));
  const exec: TerminalExec = {
    onData: (l) => void (listener = l),
    write: (data) => void written.push(String(data)),
    ended,
    exitCode: () => ended.then(() => code),
    close: () => void (closed = true),
  };
  return {
    exec,
    written,
    closed: () => closed,
    push: (bytes: Buffer) => listener?.(bytes),
    exit: (exitCode: number | null) => {
      code = exitCode;
      end();
    },
  };
}

describe("ShellTerminal", () => {
  it("decodes UTF-8 split across chunks", () => {
    const t = scriptedExec();
    const term = new ShellTerminal(t.exec);
    const seen: string[] = [];
    term.onData((text) => seen.push(text));
    const bytes = Buffer.from("é€😀", "utf8");
    for (const byte of bytes) t.push(Buffer.from([byte]));
    expect(seen.join("")).toBe("é€😀");
  });

  it("finds what follows a marker up to RS, across chunks", async () => {
    const t = scriptedExec();
    const term = new ShellTerminal(t.exec);
    const found = term.watchFor("\x1eREADY", 5_000, "start");
    t.push(Buffer.from("noise \x1eREA"));
    t.push(Buffer.from("DY42:/dev/pts/3\x1e after"));
    await expect(found).resolves.toBe("42:/dev/pts/3");
  });

  it("fails a watch when the shell exits first, with the status, even one that exited before the watch", async () => {
    const t = scriptedExec();
    const term = new ShellTerminal(t.exec);
    const watching = term.watchFor("\x1eREADY", 5_000, "the shell did not start");
    t.exit(137);
    await expect(watching).rejects.toThrow(/^the shell did not start: the shell exited \(137\)/);
    await expect(term.watchFor("\x1eREADY", 5_000, "later")).rejects.toThrow(
      /^later: the shell exited \(137\)/,
    );
    const codes: Array<number | null> = [];
    term.onExit((code) => codes.push(code));
    await Promise.resolve();
    expect(codes).toEqual([137]);
  });

  it("types its last words before closing", () => {
    const t = scriptedExec();
    new ShellTerminal(t.exec).close("builtin exit 0\n");
    expect(t.written).toEqual(["builtin exit 0\n"]);
    expect(t.closed()).toBe(true);
  });
});
