// An artificial load for the bench (`--burn N`): N processes that each spin on a core at the
// bench's own priority, so figures can be read beside the same figures on a quiet machine. Each
// burner is a child of the bench and is killed when the bench ends, however it ends.
import { spawn } from "node:child_process";

/** Starts `n` CPU burners; returns a function that stops them (also called at exit). */
export function startBurners(n) {
  const burners = Array.from({ length: n }, () =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
  );
  const stop = () => {
    for (const burner of burners) if (burner.exitCode === null) burner.kill("SIGKILL");
  };
  process.once("exit", stop);
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => {
      stop();
      process.exit(130);
    });
  }
  return { pids: burners.map((b) => b.pid), stop };
}

/** The value of `--burn N` or `--burn=N` in args: undefined when absent, else a string error or N. */
export function burnArgument(args) {
  const at = args.findIndex((a) => a === "--burn" || a.startsWith("--burn="));
  if (at === -1) return { used: [] };
  const inline = args[at].startsWith("--burn=");
  const text = inline ? args[at].slice("--burn=".length) : args[at + 1];
  const used = inline ? [args[at]] : [args[at], args[at + 1]];
  const n = Number(text);
  if (text === undefined || !/^\d+$/.test(text) || n < 1 || n > 64) {
    return { used, error: `--burn takes how many CPU burners to start, a whole number from 1 to 64 (got ${text === undefined ? "nothing" : JSON.stringify(text)}); e.g. npm run bench -- --burn 2` };
  }
  return { used, n };
}
