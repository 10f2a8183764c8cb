import type { Command } from "commander";
import { hostname } from "node:os";
import { resolve } from "node:path";
import type { BoxEngine } from "../engine/box-engine.js";
import { closeEngine, connectEngine, ENGINE_HELP } from "../engine/connect-engine.js";
import { Engine } from "../engine/engine.js";
import { LABEL_OWNER, LABEL_SESSION, LABEL_STATE, ownerIsDead, parseOwner } from "../engine/labels.js";
import { pruneAuditLogs } from "../session/audit-log.js";
import { ownerState, planPrune, removePlanned, type PlannedRemoval } from "../session/orphans.js";
import { readSessionRecord } from "../session/session-record.js";
import { FlagError } from "../util/errors.js";
import { stateDir } from "../util/paths.js";
import { decimal } from "./flag-values.js";
import { readFinalDiff } from "../session/final-diff.js";
import { applySession, keptDiffNote, sessionDiff, sessionDiffStat } from "./session-changes.js";
import { checkpointSession, forkFromCli, listCheckpoints, restoreSession } from "./session-checkpoints.js";
import { confirmRemoval } from "./removal-confirmation.js";
import { printSessionLog } from "./session-log.js";
import { sessionRow, sessionTableRows } from "./session-rows.js";
import { personShell } from "./session-shell.js";
import { renderSessionFacts, sessionFacts } from "./session-show.js";
import { findSession, matchBox, sessionBoxes } from "./session-target.js";
import { stdoutClosed } from "./stdout-closed.js";
import { textTable } from "./text-table.js";
import { terminalLine, terminalText } from "../util/terminal-text.js";
import { diffOut, printErr, printJson, printOut, terminalErr, terminalOut } from "./terminal-out.js";

interface ApplyFlags {
  branch?: string;
  replaceBranch?: boolean;
  includeUncommitted?: boolean;
  worktree?: boolean;
  allowIgnoreChanges?: boolean;
}

export function registerSessionsCommand(program: Command): void {
  const sessions = program
    .command("sessions")
    .description(
      "watch and inspect sessions from another terminal: list, show, log, diff, apply, shell; remove boxes",
    );
  sessions
    .command("list")
    .description(
      "list this state directory's drydock boxes: session, age, owner, whether the owner is alive, repository",
    )
    .option("--all", "every drydock box on the engine, whatever drydock made it")
    .option("--json", "print JSON")
    .option(...ENGINE_FLAG)
    .action((opts: { all?: boolean; json?: boolean; engine?: string }) =>
      onEngine(opts.engine, async (engine) => {
        const here = stateDir();
        // Boxes made before boxes carried their state directory count as this one's, as prune counts them.
        const boxes = (await engine.listBoxes(LABEL_SESSION)).filter(
          (b) => opts.all || (b.labels[LABEL_STATE] ?? here) === here,
        );
        const records = new Map<string, Awaited<ReturnType<typeof readSessionRecord>>>();
        for (const b of boxes) {
          records.set(
            b.id,
            await readSessionRecord(b.labels[LABEL_SESSION] ?? "", b.labels[LABEL_STATE] ?? here),
          );
        }
        const now = new Date();
        const rows = boxes.map((b) =>
          sessionRow(b, {
            now,
            repoOf: (box) => records.get(box.id)?.repo,
            adopterOf: (box) => records.get(box.id)?.adopted_by,
            startedOf: (box) => records.get(box.id)?.created_at,
            ownerAlive: (owner) => {
              const parsed = parseOwner(owner);
              if (!parsed || parsed.host !== hostname()) return undefined;
              return !ownerIsDead(parsed);
            },
          }),
        );
        if (opts.json) {
          // Oldest first, as the table.
          printJson(
            [...rows].sort((a, b) => b.age_s - a.age_s),
            2,
          );
          return;
        }
        if (rows.length === 0) {
          printOut(
            opts.all
              ? "no drydock boxes on this engine\n"
              : `no drydock boxes of ${here}; --all lists every drydock box on the engine\n`,
          );
          return;
        }
        printOut(textTable(sessionTableRows(rows)));
      }),
    );
  sessions
    .command("show")
    .description(
      "a session at a glance: box, owner, repository, image, limits, model cost, task stack, last commands",
    )
    .argument("<id>", "session id, or the first few hex digits of one")
    .option("--json", "print JSON")
    .option("--tasks-dir <path>", "directory of stored task stacks (default: <state dir>/tasks)")
    .option(...ENGINE_FLAG)
    .action((id: string, opts: { json?: boolean; tasksDir?: string; engine?: string }) =>
      onEngine(opts.engine, async (engine) => {
        const facts = await sessionFacts(await findSession(engine, id), opts.tasksDir);
        if (opts.json) printJson(facts, 2);
        else printOut(renderSessionFacts(facts));
      }),
    );
  sessions
    .command("log")
    .description(
      "a session's audit log: every tool call, model request, person's command and apply, as it happened",
    )
    .argument("<id>", "session id, or the first few hex digits of one")
    .option("-f, --follow", "keep printing new lines until the session ends (Ctrl-C stops)")
    .option("--json", "print the JSON lines as they are stored")
    .option(...ENGINE_FLAG)
    .action((id: string, opts: { follow?: boolean; json?: boolean; engine?: string }) =>
      // The log itself needs no engine; whether the session still runs does.
      onEngineIfAny(opts.engine, async (engine) => {
        const target = await findSession(engine, id);
        const stop = new AbortController();
        process.once("SIGINT", () => stop.abort());
        const signal = AbortSignal.any([stop.signal, stdoutClosed]);
        await printSessionLog(engine, target, { ...opts, signal }, terminalOut, terminalErr);
      }),
    );
  sessions
    .command("diff")
    .description(
      "the diff of everything changed in a session's box since it started (binary-safe); once the box is gone, the diff kept when the session ended",
    )
    .argument("<id>", "session id, or the first few hex digits of one")
    .option("--stat", "print a diffstat instead")
    .option(...ENGINE_FLAG)
    .action((id: string, opts: { stat?: boolean; engine?: string }) =>
      onEngineIfAny(opts.engine, async (engine) => {
        const target = await findSession(engine, id);
        const kept = target.box ? undefined : await readFinalDiff(target.id, target.state);
        if (kept) {
          // The box is gone (or the engine does not answer): the diff kept when the session ended.
          printErr(`${keptDiffNote(target.id, kept)}\n`);
          if (opts.stat)
            throw new FlagError(
              "--stat",
              `--stat needs the session's box; for the kept diff: drydock sessions diff ${target.id} | git apply --stat`,
            );
          diffOut.write(kept.diff);
          return;
        }
        const running = engine ?? (await Engine.connect());
        if (opts.stat) printOut(await sessionDiffStat(running, target));
        else diffOut.write(await sessionDiff(running, target));
      }),
    );
  sessions
    .command("apply")
    .description(
      "apply a session's changes to its host repository: a new branch drydock/<id> (default) without touching the working tree, or --worktree",
    )
    .argument("<id>", "session id, or the first few hex digits of one")
    .option("--branch <name>", "the branch to create (default drydock/<session id>)")
    .option("--replace-branch", "move the branch if it exists (to apply a session again)")
    .option(
      "--include-uncommitted",
      "branch: also commit the uncommitted work the session started from (default: the branch sits on your last commit)",
    )
    .option("--worktree", "apply into the working tree instead of a branch")
    .option(
      "--allow-ignore-changes",
      "with --worktree: apply a diff that removes or weakens .gitignore rules (refused by default)",
    )
    .option(...ENGINE_FLAG)
    .action(async (id: string, opts: ApplyFlags & { engine?: string }) => {
      if (opts.worktree && (opts.branch || opts.replaceBranch || opts.includeUncommitted)) {
        throw new FlagError(
          "--worktree",
          "applies into the working tree; leave out --branch, --replace-branch and --include-uncommitted",
        );
      }
      const { result, target } = await onEngine(opts.engine, async (engine) => {
        const target = await findSession(engine, id);
        const result = await applySession(engine, target, {
          mode: opts.worktree ? "worktree" : "branch",
          branch: opts.branch,
          replaceBranch: opts.replaceBranch,
          includeUncommitted: opts.includeUncommitted,
          allowIgnoreChanges: opts.allowIgnoreChanges,
        });
        return { result, target };
      });
      for (const warning of result.warnings ?? []) printErr(`drydock: warning: ${terminalText(warning)}\n`);
      const repo = target.record?.repo ?? "";
      printOut(
        terminalText(
          result.files.length === 0
            ? "nothing changed in the box; nothing was applied\n"
            : result.mode === "branch"
              ? `committed ${result.files.length} file(s) on branch ${result.branch} (${result.commit?.slice(0, 12)}) in ${repo}; the working tree was not touched\n`
              : `applied ${result.files.length} file(s) to the working tree of ${repo}\n`,
        ),
      );
    });
  sessions
    .command("checkpoint")
    .description(
      "save a session's files (ignored ones only with --include-ignored) and git state (index, refs, HEAD) as a named checkpoint in its box; the agent's shell is its server's and is not saved from here (session_checkpoint saves it)",
    )
    .argument("<id>", "session id, or the first few hex digits of one")
    .argument("<name>", "checkpoint name: letters, digits, '.', '_' or '-' (at most 64)")
    .option("-m, --message <text>", "a note saying what this state is")
    .option("--include-ignored", "also save files .gitignore ignores")
    .option(...ENGINE_FLAG)
    .action(
      async (
        id: string,
        name: string,
        opts: { message?: string; includeIgnored?: boolean; engine?: string },
      ) => {
        const saved = await onEngine(opts.engine, async (engine) =>
          checkpointSession(engine, await findSession(engine, id), name, opts),
        );
        printOut(
          terminalText(
            `saved checkpoint ${saved.name}: ${saved.changed_files} changed file(s), ${saved.bytes.toLocaleString("en-US")} bytes\n`,
          ),
        );
      },
    );
  sessions
    .command("restore")
    .description(
      "return a session's files and git state to a checkpoint (the shell's directory and variables only through session_restore, which reaches the shell)",
    )
    .argument("<id>", "session id, or the first few hex digits of one")
    .argument("<name>", "the checkpoint")
    .option(...ENGINE_FLAG)
    .action(async (id: string, name: string, opts: { engine?: string }) => {
      const restored = await onEngine(opts.engine, async (engine) =>
        restoreSession(engine, await findSession(engine, id), name),
      );
      printOut(
        terminalText(
          `restored checkpoint ${name}: ${restored.files} path(s) written or removed${restored.shellSaved ? "; the shell was left as it is (session_restore gives it back its directory and variables)" : ""}\n`,
        ),
      );
    });
  sessions
    .command("checkpoints")
    .description("list a session's checkpoints: name, age, size, changed files, note")
    .argument("<id>", "session id, or the first few hex digits of one")
    .option("--json", "print JSON")
    .option(...ENGINE_FLAG)
    .action(async (id: string, opts: { json?: boolean; engine?: string }) => {
      const list = await onEngineIfAny(opts.engine, async (engine) =>
        listCheckpoints(await findSession(engine, id)),
      );
      if (opts.json) {
        printJson(list, 2);
        return;
      }
      if (list.length === 0) {
        printOut("no checkpoints\n");
        return;
      }
      printOut(
        textTable([
          ["NAME", "AGE", "BYTES", "FILES", "CWD", "NOTE"],
          ...list.map((c) => [
            terminalLine(c.name),
            `${c.age_s} s`,
            c.bytes.toLocaleString("en-US"),
            String(c.changed_files),
            terminalLine(c.cwd ?? "-"),
            terminalLine(c.message ?? ""),
          ]),
        ]),
      );
    });
  sessions
    .command("fork")
    .description(
      "new kept sessions starting from a session's files and git state (or a checkpoint of it), each in a box of its own with the same repository, image, limits and egress; prints each id and secret, for session_resume on a server started with --keep-sessions and this state directory",
    )
    .argument("<id>", "session id, or the first few hex digits of one")
    .option("-n <count>", "how many forks (1 to 32)", "1")
    .option("--checkpoint <name>", "start from this checkpoint instead of the state now")
    .option(
      "--keep-ttl <seconds>",
      "how long the forks' boxes are kept for a server to take up (default 86400)",
    )
    .action(async (id: string, opts: { n: string; checkpoint?: string; keepTtl?: string }) => {
      const n = decimal(opts.n, "-n", { min: 1, example: 4 }) ?? 1;
      const ttl = decimal(opts.keepTtl, "--keep-ttl", { min: 1, example: 86_400 });
      const engine = await Engine.connect();
      const forks = await forkFromCli(engine, await findSession(engine, id), {
        n,
        checkpoint: opts.checkpoint,
        keepTtlMs: ttl === undefined ? undefined : ttl * 1000,
      });
      for (const fork of forks) {
        printOut(`${fork.sessionId} ${fork.secret} (box ${fork.box})\n`);
      }
      printErr(
        `forked session ${id} into ${forks.length} kept session(s): session id and secret above; a server started with \`drydock serve --keep-sessions\` on this state directory takes each up with session_resume. Not copied: running processes, background jobs, open ports, the shell's state\n`,
      );
    });
  sessions
    .command("shell")
    .description(
      "your own interactive shell in a session's box (as the box user, in /workspace; not the agent's shell); each command you run is logged as a person's",
    )
    .argument("<id>", "session id, or the first few hex digits of one")
    .action(async (id: string) => {
      const target = await findSession(await Engine.connect(), id);
      process.exitCode = await personShell(target);
    });
  sessions
    .command("rm")
    .description(
      "remove one session's box, of this state directory: by session id or box id (or a unique prefix of either); a live session's only with --live",
    )
    .argument("<id>", "session id or box id, or the first few hex digits of one")
    .option("--live", "remove it even while its drydock process runs (ends that session; asks first)")
    .option("--state-dir <path>", "look among another state directory's boxes instead (asks first)")
    .option("-y, --yes", "confirm where there is no terminal to ask on")
    .action(async (id: string, opts: { live?: boolean; stateDir?: string; yes?: boolean }) => {
      const engine = await Engine.connect();
      const here = resolve(stateDir());
      const state = opts.stateDir === undefined ? here : resolve(opts.stateDir);
      const box = matchBox(id, await sessionBoxes(engine, state, here));
      const owner = await ownerState(box, state);
      if (owner !== "gone" && !opts.live) {
        throw new FlagError(
          "--live",
          `session ${box.labels[LABEL_SESSION]} belongs to a drydock process that ${owner === "alive" ? "is still running" : "runs on another host, which cannot be checked from here"} (${box.labels[LABEL_OWNER] ?? "no owner"}); removing its box ends the session. Stop that drydock, or add --live to remove it anyway`,
        );
      }
      const line = removalLine(
        { box, name: box.labels[LABEL_SESSION] ?? "", state, owner, kept: false },
        here,
      );
      const wider = owner !== "gone" || state !== here;
      if (!(await confirmRemoval(wider ? [line] : [], opts.yes, commandLine()))) {
        printOut("nothing removed\n");
        process.exitCode = 1;
        return;
      }
      await engine.remove(box.id);
      printOut(terminalText(`removed ${line}\n`));
    });
  sessions
    .command("prune")
    .description(
      "remove this state directory's boxes whose drydock process is gone; flags widen that, asking first for other state directories' and live sessions' boxes; with --logs-older-than, also the audit logs of sessions that ended that long ago",
    )
    .option("--all", "also boxes kept on purpose (serve --keep-sessions) whose server is gone")
    .option(
      "--live",
      "also boxes of running drydock processes (their sessions end) and of other hosts' (asks first)",
    )
    .option(
      "--state-dir <path>",
      "also boxes of this other state directory (repeatable; asks first)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option("--every-state-dir", "also boxes of every other state directory on the engine (asks first)")
    .option(
      "--engine <url>",
      `${ENGINE_HELP}; on a cluster, connecting also deletes the Leases no drydock renews, and with them their boxes`,
    )
    .option(
      "-y, --yes",
      "confirm removing what the asking flags bring in, where there is no terminal to ask on",
    )
    .option(
      "--logs-older-than <days>",
      "also remove the audit logs of this state directory's sessions that have no box and were last written at least this many days ago (0: every one without a box)",
    )
    .action(async (opts: PruneFlags) => {
      const days = decimal(opts.logsOlderThan, "--logs-older-than", { min: 0, example: 30 });
      const engine = await connectEngine(opts.engine);
      try {
        await prune(engine, opts, days);
      } finally {
        await closeEngine(engine);
      }
    });
}

/** `sessions prune` on one backend: what the flags select, asked for where they widen it. */
async function prune(engine: BoxEngine, opts: PruneFlags, days: number | undefined): Promise<void> {
  const here = resolve(stateDir());
  const plan = await planPrune(engine, {
    kept: opts.all,
    live: opts.live,
    stateDirs: opts.stateDir,
    everyStateDir: opts.everyStateDir,
  });
  const wider = plan.remove.filter((r) => r.wider).map((r) => removalLine(r, here));
  if (!(await confirmRemoval(wider, opts.yes, commandLine()))) {
    printOut("nothing removed\n");
    process.exitCode = 1;
    return;
  }
  const result = await removePlanned(engine, plan);
  printOut(
    terminalText(
      `removed ${result.removed.length} box(es)${result.removed.length ? ": " + result.removed.join(", ") : ""}; kept ${result.kept}\n`,
    ),
  );
  for (const r of plan.remove) printOut(`  removed ${removalLine(r, here)}\n`);
  if (days === undefined) return;
  const withBox = new Set((await engine.listBoxes(LABEL_SESSION)).map((b) => b.labels[LABEL_SESSION] ?? ""));
  const logs = await pruneAuditLogs(days * 86_400_000, withBox);
  printOut(
    `removed ${logs.length} audit log(s) of sessions without a box, last written ${days} day(s) ago or more\n`,
  );
}

interface PruneFlags {
  engine?: string;
  all?: boolean;
  live?: boolean;
  stateDir: string[];
  everyStateDir?: boolean;
  yes?: boolean;
  logsOlderThan?: string;
}

/** One box as a removal names it: session, box, whose state directory, whose owner. */
function removalLine(
  r: Pick<PlannedRemoval, "box" | "name" | "state" | "owner" | "kept">,
  here: string,
): string {
  const owner = { gone: "owner gone", alive: "owner running", elsewhere: "owner on another host" }[r.owner];
  const where = r.state === here ? "this state directory" : `state directory ${r.state}`;
  // Labels are whatever a client of the engine set: escaped before they reach the terminal.
  return terminalLine(
    `${r.name} (box ${r.box.id.slice(0, 12)}, ${where}, ${owner}${r.kept ? ", kept" : ""})`,
  );
}

/** The command as typed, to repeat with --yes. */
function commandLine(): string {
  const words = process.argv.slice(2).map((w) => (/^[\w./:=@-]+$/.test(w) ? w : JSON.stringify(w)));
  return `drydock ${words.join(" ")}`;
}

/** `--engine` of the verbs that read or change one session's box. */
const ENGINE_FLAG = [
  "--engine <url>",
  `${ENGINE_HELP} (default: the local Docker engine); on a cluster, connecting also deletes the Leases no drydock renews, and with them their boxes`,
] as const;

/** Runs a verb on --engine's backend (default: the local Docker engine), released after. */
async function onEngine<T>(url: string | undefined, run: (engine: BoxEngine) => Promise<T>): Promise<T> {
  const engine = await connectEngine(url);
  try {
    return await run(engine);
  } finally {
    await closeEngine(engine);
  }
}

/**
 * The same for a verb that works without a box (the log, a kept diff): with no --engine and no
 * local engine answering, it runs with none; an --engine named must answer.
 */
async function onEngineIfAny<T>(
  url: string | undefined,
  run: (engine: BoxEngine | undefined) => Promise<T>,
): Promise<T> {
  const engine = url === undefined ? await connectEngine().catch(() => undefined) : await connectEngine(url);
  try {
    return await run(engine);
  } finally {
    if (engine) await closeEngine(engine);
  }
}
