// Session ready (box up, repository inside, shell live): cold the first time a commit is seen
// (snapshot cache empty), cold again (cache warm), warm (a box from the pool) and warm from a pool
// whose boxes hold the repository's commit already (what drydock serve keeps), for repositories
// of 10, 1,000 and 10,000 files; beside `docker run` + `docker cp` of the same tree by the CLI.
// The four run in one interleaved loop, so load on the machine falls on all of them alike, with a
// fifth: the floor under any cold start, a session's own box created and started and one `true`
// run in it through the engine (no repository, no shell).
import { execFileSync, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fromPool } from "./lib/pool-alternative.mjs";
import { interleaved } from "./lib/stats.mjs";

export async function sessionReady(ctx) {
  const { Session } = await import("../dist/session/session.js");
  const { SessionManager } = await import("../dist/session/session-manager.js");
  const { createSessionBox } = await import("../dist/session/session-box.js");
  const { newSessionId } = await import("../dist/session/session-id.js");
  const { engine, image } = ctx;
  const points = [];
  for (const files of [10, 1000, 10000]) {
    const repo = ctx.repo(files);
    const runs = files === 10000 ? Math.max(6, Math.ceil(ctx.runs / 2)) : ctx.runs;
    const destroy = (s) => s.destroy();
    const manager = await SessionManager.start(engine, { pool: { size: 1, profile: { image } } });
    // The pool drydock serve keeps: its boxes hold the served repository's commit already.
    const prefilling = await SessionManager.start(engine, {
      pool: { size: 1, profile: { image }, prefillRepo: repo },
    });
    let notWarm = 0;
    let r;
    try {
      r = await interleaved(runs, {
        first: {
          run: () => Session.create(engine, { repo, image }),
          before: () => rmSync(join(ctx.stateDir, "cache"), { recursive: true, force: true }),
          after: destroy,
        },
        cold: { run: () => Session.create(engine, { repo, image }), after: destroy },
        warm: fromPool(manager, { repo, image }, () => notWarm++),
        // The pool drydock serve keeps, prefilled with the repository.
        prefilled: fromPool(prefilling, { repo, image }, () => notWarm++),
        floor: {
          run: async () => {
            const made = await createSessionBox(engine, newSessionId(), { image });
            try {
              await made.box.exec(["true"]);
            } catch (error) {
              await made.box.remove();
              rmSync(made.gatewayDir, { recursive: true, force: true });
              throw error;
            }
            return made;
          },
          after: async ({ box, gatewayDir }) => {
            await box.remove();
            rmSync(gatewayDir, { recursive: true, force: true });
          },
        },
        docker: {
          run: () => {
            const id = execFileSync(
              "docker",
              ["run", "-d", "--network", "none", image, "sleep", "infinity"],
              {
                encoding: "utf8",
              },
            ).trim();
            execFileSync("docker", ["cp", `${repo}/.`, `${id}:/workspace/`]);
            return id;
          },
          after: (id) => void spawnSync("docker", ["rm", "-f", id]),
        },
      });
    } finally {
      await manager.closeAll();
      await prefilling.closeAll();
    }
    if (notWarm) throw new Error(`${notWarm} "warm" sessions did not get a pooled box`);
    const { first, cold, warm, prefilled, floor, docker } = r;

    const label = `${files.toLocaleString("en-US")} files`;
    ctx.row("session ready", `cold, first time (${label})`, first, "docker run + docker cp", docker);
    ctx.row("session ready", `cold (${label})`, cold, "docker run + docker cp", docker);
    ctx.row(
      "session ready",
      `cold (${label}), against the engine's floor`,
      cold,
      "box created and started, one exec of true",
      floor,
    );
    ctx.row("session ready", `warm, from the pool (${label})`, warm, "docker run + docker cp", docker);
    ctx.row(
      "session ready",
      `warm, prefilled with the repository (${label})`,
      prefilled,
      "warm, from the pool",
      warm,
    );
    points.push({ files, first, cold, warm, docker });
  }
  ctx.results.series.sessionReady = points;
}
