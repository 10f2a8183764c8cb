/**
 * The program at the box end of a `BoxChannel` (box-channel.ts): drydock's box agent, the
 * Python package `box-agent/drydock_box/` at the root of this repository (and of the npm package),
 * one module per concern (the request loop, the watch of /workspace, the tree writer, the restore,
 * the fork, git's helpers), with its own lint and tests (box-agent/tests, run by `npm test`).
 *
 * It reaches the box as it did when it was one string: on the standard input of
 * `python3 -I -S -c LOADER`. The loader's one line reads the first line, box-agent/bootstrap.py as
 * JSON, and runs it; the bootstrap makes the process not dumpable, reads the second line, every
 * module's source as a JSON map from its path to its text, and imports them from memory
 * (nothing is written into the box). Requests follow (channel.py says how they are framed).
 *
 * The files are read once, at the first box channel's start, from beside `src/` or `dist/`
 * (both are one folder down from the repository's root).
 */
import { readdirSync, readFileSync } from "node:fs";

const AGENT_DIR = new URL("../../box-agent/", import.meta.url);
const PACKAGE = "drydock_box";

export interface BoxAgentStart {
  /** python3's `-c` argument: reads the first line of its input and runs it. */
  loader: string;
  /** The two lines the loader and the bootstrap read: the bootstrap's source, then the modules'. */
  input: string;
  /** Each module's path (`drydock_box/channel.py`) and source, as sent. */
  modules: Record<string, string>;
}

let cached: BoxAgentStart | undefined;

/** The agent as it is sent into a box, read from its files the first time. */
export function boxAgentStart(): BoxAgentStart {
  if (cached !== undefined) return cached;
  const read = (path: string) => readFileSync(new URL(path, AGENT_DIR), "utf8");
  const modules: Record<string, string> = {};
  for (const name of readdirSync(new URL(`${PACKAGE}/`, AGENT_DIR)).sort()) {
    if (name.endsWith(".py")) modules[`${PACKAGE}/${name}`] = read(`${PACKAGE}/${name}`);
  }
  const loader = read("loader.py").trim();
  const input = `${JSON.stringify(read("bootstrap.py"))}\n${JSON.stringify(modules)}\n`;
  cached = { loader, input, modules };
  return cached;
}
