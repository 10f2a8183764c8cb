/**
 * kubeTerminal against box Pods on a real cluster, under runc and under gVisor (where the program
 * goes through `script`, as runtime-terminal.ts has it on Docker). Run with
 * `npx vitest run --project kubernetes test/kubernetes/kube-terminal.test.ts`.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { TerminalExec } from "../../src/engine/exec-terminal.js";
import type { PodTarget } from "../../src/engine/kubernetes/kube-exec.js";
import { kubeTerminal } from "../../src/engine/kubernetes/kube-terminal.js";
import { terminalArgv } from "../../src/engine/runtime-terminal.js";
import { BoxGoneError } from "../../src/util/errors.js";
import { newBoxPod, podNamespace } from "./kube-pods.js";

/** Everything the terminal shows, as text. */
function screen(terminal: TerminalExec): () => string {
  const chunks: Buffer[] = [];
  terminal.onData((chunk) => chunks.push(chunk));
  return () => Buffer.concat(chunks).toString("utf8");
}

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("kubeTerminal on a real cluster", () => {
  const ns = podNamespace("kterm");

  for (const runtime of ["runc", "runsc"] as const) {
    describe(`under ${runtime}`, () => {
      let box: PodTarget;
      // As the engine runs a terminal program: through script under runsc.
      const open = (argv: string[], options: { cols?: number; rows?: number; input?: boolean } = {}) =>
        kubeTerminal(
          box,
          terminalArgv(argv, runtime, { cols: options.cols ?? 120, rows: options.rows ?? 50 }),
          options,
        );

      beforeAll(async () => {
        const pod = await newBoxPod(ns.core, ns.name, runtime, `t${runtime === "runsc" ? "g" : "r"}`);
        box = ns.target(pod);
      });

      it("gives the program a terminal of the size asked for, 120x50 by default", async () => {
        // The size goes on the resize channel once the socket is open, as Docker's resize after
        // start: a program that asks at its first instant may still see 0x0 under runc.
        const sized = await open(["sh", "-c", "tty; sleep 0.5; stty size"], { cols: 97, rows: 31 });
        const text = screen(sized);
        await sized.ended;
        expect(text()).toContain("31 97");
        if (runtime === "runc") expect(text()).toMatch(/^\/dev\/pts\/\d+/m);
        else expect(text()).not.toMatch(/not a tty/);
        expect(await sized.exitCode()).toBe(0);
        const plain = await open(["sh", "-c", "sleep 0.5; stty size"]);
        const shown = screen(plain);
        await plain.ended;
        expect(shown()).toContain("50 120");
      });

      it("echoes what is typed, and close() ends the program after the input is sent", async () => {
        const terminal = await open(["cat"], { input: true });
        const text = screen(terminal);
        terminal.write("hello terminal\n");
        await until("the echo", () => (text().match(/hello terminal/g) ?? []).length >= 2);
        // ^D at the start of a line: cat reads the end and exits.
        terminal.write("\x04");
        terminal.close();
        await terminal.ended;
        expect(await terminal.exitCode()).toBe(0);
      });

      it("tells the exit status, and a terminal without input cannot be typed into", async () => {
        const terminal = await open(["sh", "-c", "exit 5"]);
        await terminal.ended;
        expect(await terminal.exitCode()).toBe(5);
        expect(() => terminal.write("x")).toThrow(/no terminal input/);
      });

      it("ends at once on close() without input; a socket dropped mid-program has no status", async () => {
        const terminal = await open(["sleep", "60"]);
        const started = Date.now();
        terminal.close();
        await terminal.ended;
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(await terminal.exitCode()).toBeNull();
      });
    });
  }

  it("refuses a pod that does not exist with BoxGoneError", async () => {
    const nowhere = ns.target("drydock-nonexistent");
    await expect(kubeTerminal(nowhere, ["sh"])).rejects.toBeInstanceOf(BoxGoneError);
  });
});
