import type { Command } from "commander";
import { hostname } from "node:os";
import { Engine } from "../engine/engine.js";
import { LABEL_SESSION, LABEL_STATE, ownerIsDead, parseOwner } from "../engine/labels.js";
import { pruneOrphans } from "../session/orphans.js";
import { readSessionRecord } from "../session/session-record.js";
import { stateDir } from "../util/paths.js";
import { sessionRow, sessionTableRows } from "./session-rows.js";
import { textTable } from "./text-table.js";

export function registerSessionsCommand(program: Command): void {
  const sessions = program.command("sessions").description("find and remove session boxes by their labels");
  sessions
    .command("list")
    .description(
      "list this state directory's drydock boxes: session, age, owner, whether the owner is alive, repository",
    )
    .option("--all", "every drydock box on the engine, whatever drydock made it")
    .option("--json", "print JSON")
    .action(async (opts: { all?: boolean; json?: boolean }) => {
      const engine = await Engine.connect();
      const here = stateDir();
      // Boxes made before boxes carried their state directory count as this one's, as prune counts them.
      const boxes = (await engine.listBoxes(LABEL_SESSION)).filter(
        (b) => opts.all || (b.labels[LABEL_STATE] ?? here) === here,
      );
      const repos = new Map<string, string | undefined>();
      for (const b of boxes) {
        const record = await readSessionRecord(b.labels[LABEL_SESSION] ?? "", b.labels[LABEL_STATE] ?? here);
        repos.set(b.id, record?.repo);
      }
      const now = new Date();
      const rows = boxes.map((b) =>
        sessionRow(b, {
          now,
          repoOf: (box) => repos.get(box.id),
          ownerAlive: (owner) => {
            const parsed = parseOwner(owner);
            if (!parsed || parsed.host !== hostname()) return undefined;
            return !ownerIsDead(parsed);
          },
        }),
      );
      if (opts.json) {
        process.stdout.write(JSON.stringify(rows, null, 2) + "\n");
        return;
      }
      if (rows.length === 0) {
        process.stdout.write(
          opts.all
            ? "no drydock boxes on this engine\n"
            : `no drydock boxes of ${here}; --all lists every drydock box on the engine\n`,
        );
        return;
      }
      process.stdout.write(textTable(sessionTableRows(rows)));
    });
  sessions
    .command("rm")
    .description("remove a session's box (by session id or box id)")
    .argument("<id>", "session id or box id")
    .action(async (id: string) => {
      const engine = await Engine.connect();
      const match = (await engine.listBoxes(LABEL_SESSION)).filter(
        (b) => b.labels[LABEL_SESSION] === id || b.id.startsWith(id),
      );
      if (match.length === 0) {
        process.stderr.write(`no drydock box for ${id}; see \`drydock sessions list\`\n`);
        process.exitCode = 1;
        return;
      }
      for (const b of match) await engine.remove(b.id);
      process.stdout.write(`removed ${match.map((b) => b.labels[LABEL_SESSION]).join(", ")}\n`);
    });
  sessions
    .command("prune")
    .description("remove boxes whose drydock process is gone (with --all: every drydock box)")
    .option("--all", "remove every drydock box, including those of running drydock processes")
    .action(async (opts: { all?: boolean }) => {
      const engine = await Engine.connect();
      const result = await pruneOrphans(engine, { all: opts.all });
      process.stdout.write(
        `removed ${result.removed.length} box(es)${result.removed.length ? ": " + result.removed.join(", ") : ""}; kept ${result.kept}\n`,
      );
    });
}
