import type { Command } from "commander";
import { Engine } from "../engine/engine.js";
import {
  LABEL_CREATED,
  LABEL_OWNER,
  LABEL_POOL,
  LABEL_SESSION,
  ownerIsDead,
  parseOwner,
} from "../engine/labels.js";
import { pruneOrphans } from "../session/orphans.js";

export function registerSessionsCommand(program: Command): void {
  const sessions = program.command("sessions").description("find and remove session boxes by their labels");
  sessions
    .command("list")
    .description("list every drydock box on the engine, with its owner and whether the owner is alive")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      const engine = await Engine.connect();
      const rows = (await engine.listBoxes(LABEL_SESSION)).map((b) => {
        const owner = parseOwner(b.labels[LABEL_OWNER]);
        return {
          session: b.labels[LABEL_SESSION] ?? "",
          box: b.id.slice(0, 12),
          state: b.state,
          created: b.labels[LABEL_CREATED] ?? b.createdAt.toISOString(),
          owner: b.labels[LABEL_OWNER] ?? "",
          orphan: !owner || ownerIsDead(owner),
          /** Made by a warm pool (idle, or taken by the session it names). */
          pool: b.labels[LABEL_POOL] !== undefined,
        };
      });
      if (opts.json) {
        process.stdout.write(JSON.stringify(rows, null, 2) + "\n");
        return;
      }
      if (rows.length === 0) {
        process.stdout.write("no drydock sessions\n");
        return;
      }
      for (const r of rows) {
        process.stdout.write(
          `${r.session}  ${r.box}  ${r.state.padEnd(8)} ${r.created}  ${r.orphan ? "orphan" : `owner ${r.owner}`}${r.pool ? "  (warm pool)" : ""}\n`,
        );
      }
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
