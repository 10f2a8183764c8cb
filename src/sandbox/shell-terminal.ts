/**
 * The shell's terminal as the shell uses it: text typed in, text read out (UTF-8 decoded across
 * chunk boundaries), listeners that can be removed, and the status the shell exited with once the
 * terminal ends. It sits on an exec attached through the engine API (engine/exec-terminal.ts).
 */
import type { TerminalExec } from "../engine/exec-terminal.js";
import { DrydockError } from "../util/errors.js";
import { RS } from "./frame-scanner.js";

export interface Listening {
  dispose(): void;
}

export class ShellTerminal {
  private readonly dataListeners = new Set<(text: string) => void>();
  private readonly exitListeners = new Set<(exitCode: number | null) => void>();
  private exited: { exitCode: number | null } | undefined;

  constructor(private readonly exec: TerminalExec) {
    const decoder = new TextDecoder();
    exec.onData((chunk) => {
      const text = decoder.decode(chunk, { stream: true });
      if (text) for (const listener of [...this.dataListeners]) listener(text);
    });
    void exec.exitCode().then((exitCode) => {
      this.exited = { exitCode };
      for (const listener of [...this.exitListeners]) listener(exitCode);
      this.exitListeners.clear();
    });
  }

  onData(listener: (text: string) => void): Listening {
    this.dataListeners.add(listener);
    return { dispose: () => void this.dataListeners.delete(listener) };
  }

  /** Called once the terminal has ended, with the shell's exit status (null when unknown). */
  onExit(listener: (exitCode: number | null) => void): Listening {
    const exited = this.exited;
    if (exited) {
      let live = true;
      queueMicrotask(() => live && listener(exited.exitCode));
      return { dispose: () => void (live = false) };
    }
    this.exitListeners.add(listener);
    return { dispose: () => void this.exitListeners.delete(listener) };
  }

  write(text: string): void {
    this.exec.write(text);
  }

  /** Closes the terminal; with `lastWords`, typed first (so an idle shell can be told to exit). */
  close(lastWords?: string): void {
    if (lastWords !== undefined) this.exec.write(lastWords);
    this.exec.close();
  }

  /**
   * What the terminal shows after `marker` and before the next RS, once it arrives; fails when the
   * shell exits first or after timeoutMs.
   */
  watchFor(marker: string, timeoutMs: number, what: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      let seen = "";
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        data.dispose();
        exit.dispose();
        settle();
      };
      const fail = (why: string) =>
        finish(() => reject(new DrydockError("shell_start_failed", `${what}: ${why}: ${seen.slice(-500)}`)));
      const timer = setTimeout(() => fail(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
      const data = this.onData((text) => {
        seen += text;
        const at = seen.indexOf(marker);
        if (at < 0) {
          if (seen.length > 100_000) seen = seen.slice(-10_000);
          return;
        }
        const rest = seen.slice(at + marker.length);
        const end = rest.indexOf(RS);
        if (end >= 0) finish(() => resolve(rest.slice(0, end)));
      });
      const exit = this.onExit((exitCode) => fail(`the shell exited (${exitCode})`));
    });
  }
}
