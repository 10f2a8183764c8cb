/** Random steps of an agent's work, for tests that compare two ways of seeing a workspace. */

/** A small deterministic random source, so a failing sequence can be run again. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Steps an agent takes, honest and hostile, on a workspace of d0..d2/f0..f3.txt with `*.log`
 * ignored and a nested repository `sub`; each is a bash snippet run in /workspace (failures of
 * one are fine).
 */
export const AGENT_STEPS: Array<(pick: (n: number) => number) => string> = [
  (p) => `echo edit-${p(1000)} >> d${p(3)}/f${p(4)}.txt`,
  (p) => `echo new > d${p(3)}/n${p(50)}.txt`,
  (p) => `rm -f d${p(3)}/f${p(4)}.txt`,
  (p) => `mv -f d${p(3)}/f${p(4)}.txt d${p(3)}/m${p(20)}.txt`,
  (p) => `chmod +x d${p(3)}/f${p(4)}.txt`,
  (p) => `chmod -x d${p(3)}/f${p(4)}.txt`,
  (p) => `mkdir -p d${p(3)}/deep${p(5)}/a/b && echo deep > d${p(3)}/deep${p(5)}/a/b/x.txt`,
  (p) => `rm -rf d${p(3)}/deep${p(5)}`,
  (p) => `mv d${p(3)} renamed${p(9)} 2>/dev/null; mkdir -p d0 d1 d2`,
  (p) => `mv renamed${p(9)} d${p(3)}/back${p(3)} 2>/dev/null; true`,
  (p) =>
    `rm -rf d${p(3)}/f${p(4)}.txt && mkdir -p d${p(3)}/f${p(4)}.txt && echo inside > d${p(3)}/f${p(4)}.txt/in`,
  (p) => `ln -sfn ../d${p(3)} d${p(3)}/link${p(3)}`,
  (p) => `ln -f d${p(3)}/f${p(4)}.txt d${p(3)}/hard${p(3)} 2>/dev/null || true`,
  (p) => `rm -f d${p(3)}/hard${p(3)}`,
  (p) => `echo 'n${p(50)}.txt' >> .gitignore`,
  () => `sed -i '/^n/d' .gitignore`,
  (p) => `echo ignored > d${p(3)}/x.log`,
  () => `sed -i 's/log/LOG/' .gitignore`,
  (p) => `touch d${p(3)}/f${p(4)}.txt`,
  (p) => `sed -i 's/edit/EDIT/' d${p(3)}/f${p(4)}.txt 2>/dev/null || true`,
  (p) => `echo tmp > d${p(3)}/t && rm d${p(3)}/t`,
  (p) => `git add -A d${p(3)} && git -c user.name=a -c user.email=a@b commit -qm step${p(100)} || true`,
  (p) => `git checkout -q -- d${p(3)} 2>/dev/null || true`,
  (p) =>
    `(cd sub && echo c${p(100)} > s.txt && git add -A && git -c user.name=a -c user.email=a@b commit -qm s) || true`,
  (p) => `echo 'd${p(3)}/n*' >> .git/info/exclude`,
  (p) => `echo x > 'd${p(3)}/*' && echo y > 'd${p(3)}/:(top)' && echo z > 'd${p(3)}/-n'`,
  (p) => `printf 'nl' > "d${p(3)}/new
line"`,
  () => `rm -rf d0 && echo file > d0`,
  () => `rm -f d0 && mkdir -p d0 && echo back > d0/f0.txt`,
  (p) => `cp d${p(3)}/f${p(4)}.txt d${p(3)}/f${p(4)}.txt.bak 2>/dev/null; true`,
  // Names like the tags of git ls-files -t, which the diff's add reads ("H path", "? path").
  (p) => `echo t > 'd${p(3)}/? x${p(3)}' && echo h > 'd${p(3)}/H y${p(3)}'`,
  // A directory git may track files in, now a link out of the workspace.
  (p) => `rm -rf d${p(3)}/deep${p(5)} && ln -sfn /etc d${p(3)}/deep${p(5)}`,
];

/** The files of the workspace AGENT_STEPS work on: d0..d2/f0..f3.txt, and `*.log` ignored. */
export function agentStepFiles(): Record<string, string> {
  const files: Record<string, string> = { ".gitignore": "*.log\n" };
  for (let d = 0; d < 3; d++) for (let f = 0; f < 4; f++) files[`d${d}/f${f}.txt`] = `d${d} f${f}\n`;
  return files;
}

/** Run in /workspace: makes `sub`, a repository inside the workspace (git holds it as one entry, its commit). */
export const NESTED_REPOSITORY =
  "mkdir sub && cd sub && git init -q && echo s > s.txt && git add -A && git -c user.name=a -c user.email=a@b commit -qm s";

/**
 * A line of `git diff-tree -r` that only a repository inside the workspace makes (either side
 * mode 160000), as an extended regular expression: a restore leaves such a repository at the
 * commit it is at, so the restored tree may differ from the checkpoint's there and nowhere else.
 */
export const NESTED_DIFFERS = "^:(160000 [0-7]{6}|[0-7]{6} 160000) ";
