/**
 * A terminal inside the box under every runtime. Under runc an exec's terminal is a pty of the
 * box (/dev/pts/N). Under runsc (gVisor) it is the host's terminal handed in as a file: `tty` says
 * "not a tty" and no path in the box leads to it, so nothing can write to it by name. There the
 * program is started under `script`, which opens a pty inside the box, copies it to the exec's
 * terminal both ways, and exits with the program's status; it is named by its absolute path, since
 * the box's PATH holds directories the agent can write. Pure, so it is tested without an engine.
 */

/** Runtimes whose exec terminals are not ptys of the box. */
const HOST_TERMINAL_RUNTIMES = new Set(["runsc"]);

const quote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

/** The argv that runs `argv` on a terminal of the box, `cols` x `rows`, under `runtime`. */
export function terminalArgv(
  argv: readonly string[],
  runtime: string | undefined,
  size: { cols: number; rows: number },
): string[] {
  if (runtime === undefined || !HOST_TERMINAL_RUNTIMES.has(runtime)) return [...argv];
  // script copies the size of its own terminal when it starts, before the engine's resize arrives,
  // and no SIGWINCH crosses into the sandbox: the inner terminal is sized here.
  const line = `/bin/stty cols ${size.cols} rows ${size.rows} 2>/dev/null; exec ${argv.map(quote).join(" ")}`;
  return ["/usr/bin/script", "--quiet", "--flush", "--return", "--command", line, "/dev/null"];
}
