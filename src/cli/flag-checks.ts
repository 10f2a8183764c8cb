/**
 * Checks of command-line flags that look at the machine (files, ports, the engine), made before
 * anything starts. Each refusal is a FlagError naming the flag and the fix; the CLI exits 2.
 */
import { DOCKER_HUB, parseImageReference } from "../engine/image-reference.js";
import { stat } from "node:fs/promises";
import { createServer } from "node:net";
import { dirname, resolve } from "node:path";
import type { BoxEngine } from "../engine/box-engine.js";
import type { Engine } from "../engine/engine.js";
import { parseLlmMode } from "../gateway/llm-mode.js";
import { loadOfflineScript } from "../gateway/offline-script.js";
import { FlagError, imageFix, InvalidArgumentError } from "../util/errors.js";
import { hostGit, openHostRepo, type HostRepo } from "../workspace/host-repo.js";

/** Fields that checks shared with the MCP tools name as a tool would, and the flags that set them. */
const FLAG_OF_FIELD: Record<string, string> = { model: "--model" };

/**
 * Runs a check whose own errors name the flag, and makes them flag errors (exit code 2). `flags`
 * renames further fields to the flags that set them.
 */
export async function asFlagError<T>(
  check: () => T | Promise<T>,
  flags: Record<string, string> = FLAG_OF_FIELD,
): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof InvalidArgumentError && !(error instanceof FlagError)) {
      throw new FlagError(flags[error.field] ?? error.field, error.message.slice(error.field.length + 2));
    }
    throw error;
  }
}

/** The absolute path of an existing regular file. */
export async function existingFile(path: string, flag: string, what: string): Promise<string> {
  const absolute = resolve(path);
  const info = await stat(absolute).catch(() => undefined);
  if (!info) throw new FlagError(flag, `${absolute} does not exist; give the path of ${what}`);
  if (!info.isFile()) throw new FlagError(flag, `${absolute} is not a file; give the path of ${what}`);
  return absolute;
}

/** The absolute path of an existing directory. */
export async function existingDir(path: string, flag: string, what: string): Promise<string> {
  const absolute = resolve(path);
  const info = await stat(absolute).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new FlagError(flag, `${absolute} is not a directory; give the path of ${what}`);
  }
  return absolute;
}

/** The git repository holding a path. */
export function repoFlag(path: string, flag: string): Promise<HostRepo> {
  return asFlagError(() => openHostRepo(path, flag));
}

/** `--branch`: a valid branch name that the repository does not have yet. */
export async function branchFlag(repoRoot: string, branch: string): Promise<void> {
  const valid = await hostGit(repoRoot, ["check-ref-format", "--branch", branch]).then(
    () => !branch.startsWith("-"),
    () => false,
  );
  if (!valid) {
    throw new FlagError(
      "--branch",
      `${JSON.stringify(branch)} is not a valid branch name; write e.g. --branch drydock/fix-typo`,
    );
  }
  const exists = await hostGit(repoRoot, ["rev-parse", "--verify", "-q", `refs/heads/${branch}`]).then(
    () => true,
    () => false,
  );
  if (exists) {
    throw new FlagError(
      "--branch",
      `${branch} already exists in ${repoRoot}; choose a new name (drydock never moves a branch you have)`,
    );
  }
}

/** An offline model script: it must exist and parse. Returns its absolute path. */
export async function offlineScriptFlag(path: string | undefined, flag: string): Promise<string | undefined> {
  if (path === undefined) return undefined;
  const absolute = await existingFile(
    path,
    flag,
    "an offline model script (see docs/aider.md, The offline model)",
  );
  try {
    loadOfflineScript(absolute);
  } catch (error) {
    const reason =
      error instanceof InvalidArgumentError ? error.message.slice(error.field.length + 2) : String(error);
    throw new FlagError(flag, reason);
  }
  return absolute;
}

/** `--llm`: a known mode, a replay file that exists, a record file whose directory exists. */
export async function llmFlag(spec: string | undefined, flag = "--llm"): Promise<void> {
  if (spec === undefined) return;
  const mode = await asFlagError(() => parseLlmMode(spec));
  if (mode.kind === "replay") {
    await existingFile(mode.file, flag, "a file written by --llm record:FILE");
  } else if (mode.kind === "record") {
    await existingDir(dirname(mode.file), flag, "the directory the recording goes into");
  }
}

/** With `--http`: the address must be this machine's and the port free, so the server can listen. */
export async function portFlag(host: string, port: number): Promise<void> {
  const server = createServer();
  try {
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(port, host, () => done());
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") {
      throw new FlagError(
        "--port",
        `${port} is already in use on ${host} (another program, or another drydock serve); choose another port, or --port 0 for any free one`,
      );
    }
    if (code === "EACCES") {
      throw new FlagError("--port", `${port} needs privileges to listen on; choose a port of 1024 or more`);
    }
    if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN") {
      throw new FlagError(
        "--host",
        `${host} is not an address of this machine; use 127.0.0.1 (loopback, the default) or one of its addresses`,
      );
    }
    throw new FlagError("--host", `cannot listen on ${host}:${port}: ${(error as Error).message}`);
  } finally {
    await new Promise<void>((done) => (server.listening ? server.close(() => done()) : done()));
  }
}

/**
 * `--image`: an image the engine has, or one on a registry host (`registry.example.com/team/box:1`),
 * which is pulled when used, as `--pull` says.
 */
export async function imageFlag(engine: BoxEngine, image: string | undefined): Promise<void> {
  if (image === undefined || (await engine.hasImage(image))) return;
  const parsed = parseImageReference(image);
  if (parsed && parsed.registry !== DOCKER_HUB) return;
  if (engine.name.startsWith("kubernetes:")) {
    throw new FlagError(
      "--image",
      `${image} is not on every Ready node of ${engine.name}; push it to the registry the nodes pull from and name it there, or import it into each node's runtime (the test cluster: scripts/kube/cluster.sh load ${image})`,
    );
  }
  throw new FlagError(
    "--image",
    `${image} is not in the engine; ${imageFix(image)}; or name one \`docker images\` lists, or leave --image out for drydock's own sandbox image`,
  );
}

/** `--network`: "none" or a network the engine has. */
export async function networkFlag(engine: Engine, network: string | undefined): Promise<void> {
  if (network === undefined || network === "none" || (await engine.hasNetwork(network))) return;
  throw new FlagError(
    "--network",
    `the engine has no network ${JSON.stringify(network)}; create it with \`docker network create ${network}\`, or name one \`docker network ls\` lists`,
  );
}
