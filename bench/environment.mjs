// Project environments: the build of an environment whose setup makes 20,000 dependency files
// (cold, and cached: the look-up a session start pays), and session ready on that repository with
// its environment beside the same repository without one (the sandbox image), cold and warm,
// measured in one interleaved loop.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { interleaved, timed } from "./lib/stats.mjs";

const MAKE_DEPS =
  "node -e \"const fs=require('fs');for(let i=0;i<1000;i++){const d='node_modules/pkg'+i;fs.mkdirSync(d,{recursive:true});" +
  "for(let j=0;j<20;j++)fs.writeFileSync(d+'/f'+j+'.js','module.exports='+j+'\\\\n')}\"";

function envRepo(dir, nonce) {
  mkdirSync(join(dir, ".drydock"), { recursive: true });
  writeFileSync(join(dir, "package.json"), '{"name":"bench","version":"1.0.0","private":true}\n');
  writeFileSync(join(dir, "index.js"), "module.exports = require('pkg7/f3.js');\n");
  writeFileSync(join(dir, ".gitignore"), "node_modules/\n");
  writeFileSync(join(dir, ".drydock", "environment.yaml"), `env: {BENCH_NONCE: "${nonce}"}\nsetup:\n  - ${MAKE_DEPS}\n`);
  const git = (...args) =>
    execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", "-C", dir, ...args], { stdio: "ignore" });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "bench");
}

export async function environmentBench(ctx) {
  const { EnvironmentImages } = await import("../dist/environment/environment-images.js");
  const { Session } = await import("../dist/session/session.js");
  const { SessionManager } = await import("../dist/session/session-manager.js");
  const { engine, image } = ctx;
  const envs = new EnvironmentImages(engine, { baseImage: image });
  const buildRuns = Math.max(2, Math.min(3, ctx.runs));
  const built = [];
  const cold = await timed(
    buildRuns,
    async (dir) => (await envs.imageFor({ repo: dir, onLine: () => undefined })).image,
    {
      warmup: 0,
      before: (i) => {
        const dir = join(ctx.tmp, `env-build-${i}`);
        envRepo(dir, `${Date.now()}-${i}`);
        return dir;
      },
      after: (tag) => void built.push(tag),
    },
  );
  const repo = join(ctx.tmp, "env-build-0");
  const cached = await timed(ctx.runs, () => envs.imageFor({ repo }));
  ctx.row("environment", "build, 20,000 dependency files (cold)", cold);
  ctx.row("environment", "look-up of a built environment (what a session start pays)", cached);
  const envImage = built[0];
  const check = await Session.create(engine, { repo, image: envImage });
  const files = (await check.bash("find -L node_modules -type f | wc -l", {})).output.trim();
  await check.destroy();
  ctx.say(`environment box sees ${files} files under node_modules`);

  const ready = await interleaved(ctx.runs, {
    env: {
      run: async () => Session.create(engine, { repo, image: (await envs.imageFor({ repo })).image }),
      after: (s) => s.destroy(),
    },
    plain: { run: () => Session.create(engine, { repo, image }), after: (s) => s.destroy() },
  });
  ctx.row("environment", "session ready, cold, with the environment", ready.env, "same repository, no environment", ready.plain);

  const withEnv = await SessionManager.start(engine, { pool: { size: 1, profile: { image: envImage } } });
  const plain = await SessionManager.start(engine, { pool: { size: 1, profile: { image } } });
  let notWarm = 0;
  const take = (manager, imageOf) => ({
    before: () => manager.pool.full(),
    run: async () => manager.create({ repo, image: await imageOf() }),
    after: async (s) => {
      if (!s.warm) notWarm++;
      await manager.destroy(s.id);
    },
  });
  try {
    const warm = await interleaved(ctx.runs, {
      env: take(withEnv, async () => (await envs.imageFor({ repo })).image),
      plain: take(plain, async () => image),
    });
    ctx.row("environment", "session ready, warm, with the environment", warm.env, "same repository, no environment", warm.plain);
  } finally {
    await withEnv.closeAll();
    await plain.closeAll();
  }
  if (notWarm) throw new Error(`${notWarm} "warm" sessions did not get a pooled box`);
  for (const tag of new Set(built)) execFileSync("docker", ["rmi", "-f", tag], { stdio: "ignore" });
}
