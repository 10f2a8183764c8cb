/**
 * Prepares a person's shell in a box: a directory of the person's own under /tmp (made by the
 * person's uid, 0700, in the sticky /tmp: the agent's uid can neither read, change, remove nor
 * rename it) holding the shell's rc (with its nonce) and the person's git directory
 * (person-shell-git.ts). Every exec runs as the person's uid, from absolute paths, with argument
 * lists (no shell): the files arrive as a tar stream drydock wrote, on the exec's stdin.
 */
import { Readable } from "node:stream";
import tar from "tar-stream";
import type { Engine } from "../engine/engine.js";
import { DrydockError } from "../util/errors.js";
import { PERSON_EXEC_ENV, PERSON_USER } from "./person-shell-confinement.js";
import {
  GIT_DIR_LINKS,
  MAX_GIT_CONFIG_BYTES,
  personGitConfig,
  personGitHead,
  REPO_GIT_DIR,
  submodulePaths,
  type PersonGitConfig,
} from "./person-shell-git.js";

export interface StagedShell {
  /** The person's directory in the box. */
  dir: string;
  /** The rc the shell reads. */
  rc: string;
  /** The person's git directory, when the repository's could be read. */
  gitDir: string | null;
  /** What the person is told before the first prompt (git's config left out, or not read). */
  notes: string[];
}

const STAGE_TIMEOUT_MS = 30_000;

/** Makes the person's directory and writes the rc and the git directory into it. */
export async function stagePersonShell(engine: Engine, boxId: string, rc: string): Promise<StagedShell> {
  // Every program from an empty environment (no TAR_OPTIONS, no TMPDIR of the box's).
  const run = (argv: string[], stdin?: Buffer, maxOutputBytes = MAX_GIT_CONFIG_BYTES + 1) =>
    engine.exec(boxId, ["/usr/bin/env", "-i", ...argv], {
      user: PERSON_USER,
      env: PERSON_EXEC_ENV,
      stdin,
      timeoutMs: STAGE_TIMEOUT_MS,
      maxOutputBytes,
    });
  // One read of each file, not following a link, not waiting on a pipe: what is parsed is what was read.
  const readOnce = async (name: string, max: number): Promise<Buffer | null> => {
    const r = await run([
      "/bin/dd",
      `if=${REPO_GIT_DIR}/${name}`,
      "iflag=nofollow,nonblock,count_bytes",
      `count=${max + 1}`,
      "status=none",
    ]);
    return r.exitCode === 0 && !r.truncated ? r.stdout : null;
  };
  const [made, configBytes, headBytes] = await Promise.all([
    run(["/usr/bin/mktemp", "-d", "/tmp/.drydock-person.XXXXXXXXXX"]),
    readOnce("config", MAX_GIT_CONFIG_BYTES),
    readOnce("HEAD", 4096),
  ]);
  // The last line: a loader told to by the box's environment (LD_SHOW_AUXV) may print before it.
  const dir = made.stdout.toString().trim().split("\n").pop() ?? "";
  if (made.exitCode !== 0 || !/^\/tmp\/\.drydock-person\.[A-Za-z0-9]{10}$/.test(dir)) {
    throw new DrydockError(
      "person_shell_failed",
      `could not prepare the person's shell in box ${boxId.slice(0, 12)}: ${made.stderr.toString().trim() || `exit ${made.exitCode}`}; is /tmp full? check with \`drydock sessions show\``,
    );
  }
  const notes: string[] = [];
  const head = headBytes ? personGitHead(headBytes.toString("latin1")) : null;
  let git: PersonGitConfig = { config: null, dropped: [], problem: "it could not be read" };
  if (configBytes) git = await personGitConfig(configBytes);
  if (!head)
    notes.push(`git: ${REPO_GIT_DIR}/HEAD is not a branch or a commit id; git is not set up in this shell`);
  else if (!git.config)
    notes.push(`git: ${REPO_GIT_DIR}/config was not used (${git.problem}); git is not set up in this shell`);
  else if (git.dropped.length > 0)
    notes.push(`git: settings of the agent's left out of this shell's git: ${git.dropped.join(", ")}`);

  const pack = tar.pack();
  pack.entry({ name: "rc", mode: 0o600 }, rc);
  const withGit = head !== null && git.config !== null;
  if (withGit) {
    pack.entry({ name: "git", type: "directory", mode: 0o700 });
    pack.entry({ name: "git/config", mode: 0o600 }, git.config!);
    pack.entry({ name: "git/HEAD", mode: 0o600 }, head);
    for (const name of GIT_DIR_LINKS) {
      pack.entry({ name: `git/${name}`, type: "symlink", linkname: `${REPO_GIT_DIR}/${name}` });
    }
  }
  pack.finalize();
  const tarBytes = await new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    Readable.from(pack)
      .on("data", (c: Buffer) => parts.push(c))
      .on("end", () => resolve(Buffer.concat(parts)))
      .on("error", reject);
  });
  const put = await run(["/bin/tar", "-x", "-f", "-", "-C", dir, "--no-same-owner"], tarBytes);
  if (put.exitCode !== 0) {
    await removePersonShell(engine, boxId, dir);
    throw new DrydockError(
      "person_shell_failed",
      `could not write the person's shell files in box ${boxId.slice(0, 12)}: ${put.stderr.toString().trim() || `exit ${put.exitCode}`}; is /tmp full? check with \`drydock sessions show\``,
    );
  }
  const gitReady = withGit && (await personIndex(run, `${dir}/git`, notes));
  return { dir, rc: `${dir}/rc`, gitDir: gitReady ? `${dir}/git` : null, notes };
}

type BoxRun = (argv: string[], stdin?: Buffer, maxOutputBytes?: number) => ReturnType<Engine["exec"]>;

/** The most of the index's listing read: a larger one is not set up in the shell. */
const MAX_INDEX_LISTING_BYTES = 64 * 1024 * 1024;

/**
 * The person's index: the agent's, copied once (no link followed, no pipe waited on), with its
 * submodule entries removed by git itself (see SUBMODULE_MODE). False, with a note, when that
 * cannot be done: git is then not set up in the shell.
 */
async function personIndex(run: BoxRun, gitDir: string, notes: string[]): Promise<boolean> {
  const index = `${gitDir}/index`;
  const git = (args: string[], stdin?: Buffer) =>
    run(
      [
        `GIT_DIR=${gitDir}`,
        `GIT_INDEX_FILE=${index}`,
        "GIT_CONFIG_NOSYSTEM=1",
        "GIT_CONFIG_GLOBAL=/dev/null",
        "GIT_OPTIONAL_LOCKS=0",
        "/usr/bin/git",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.fsmonitor=false",
        ...args,
      ],
      stdin,
      MAX_INDEX_LISTING_BYTES,
    );
  const copied = await run([
    "/bin/dd",
    `if=${REPO_GIT_DIR}/index`,
    `of=${index}`,
    "iflag=nofollow,nonblock",
    "status=none",
  ]);
  if (copied.exitCode !== 0) {
    notes.push(`git: ${REPO_GIT_DIR}/index could not be read as a file; git is not set up in this shell`);
    return false;
  }
  const staged = await git(["ls-files", "--stage", "-z"]);
  if (staged.exitCode !== 0 || staged.truncated) {
    notes.push(`git: ${REPO_GIT_DIR}/index could not be read; git is not set up in this shell`);
    return false;
  }
  const submodules = submodulePaths(staged.stdout);
  if (submodules.length === 0) return true;
  const removed = await git(
    ["update-index", "--force-remove", "-z", "--stdin"],
    Buffer.from(submodules.map((p) => `${p}\0`).join("")),
  );
  if (removed.exitCode !== 0) {
    notes.push(
      `git: the submodules could not be left out of this shell's index; git is not set up in this shell`,
    );
    return false;
  }
  notes.push(
    `git: submodules are left out of this shell's git (${submodules.length}): their directories are the agent's`,
  );
  return true;
}

/** Removes the person's directory (as the person: the agent cannot). */
export async function removePersonShell(engine: Engine, boxId: string, dir: string): Promise<void> {
  await engine
    .exec(boxId, ["/usr/bin/env", "-i", "/bin/rm", "-rf", "--", dir], {
      user: PERSON_USER,
      env: PERSON_EXEC_ENV,
      timeoutMs: 10_000,
    })
    .catch(() => undefined);
}
