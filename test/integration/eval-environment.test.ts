/**
 * What eval says about the image each task ran in, and what it tells the reader when that image
 * cannot be had: each result names its image (`environment_image`) and the time its environment
 * build took (`environment_build_ms`, kept out of the task's start and duration), run.json and
 * junit.xml carry them too; a failing inline environment names the task's file line and the
 * definition's own line and says to run the eval again (not `drydock env build`, which builds
 * another definition); a missing per-task `image` or `--image` says how to load or build that
 * image (not `drydock image build`, which cannot make it).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { environmentImages, removeImages } from "../../src/environment/environment-prune.js";
import type { AttemptResult } from "../../src/eval/attempt-result.js";
import { git } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const MISSING = "drydock-test-no-such-image:1";
let work: string;

function evalCli(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [cli, "eval", ...args], {
    cwd: work,
    env: { ...process.env, DRYDOCK_STATE_DIR: join(work, "state") },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

const result = (out: string, id: string) =>
  JSON.parse(readFileSync(join(work, out, "tasks", id, "result.json"), "utf8")) as AttemptResult;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "drydock-eval-environment-"));
  const repo = join(work, "repo");
  git(work, "init", "-q", "-b", "main", repo);
  writeFileSync(join(repo, "README.md"), "hello\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "initial");
  const task = (id: string, extra: Record<string, unknown>) =>
    JSON.stringify({ id, repo: "repo", prompt: "nothing to do", test_cmd: "true", patch: "", ...extra });
  // The build sleeps 4 s, so its time is told apart from the task's own.
  const slow = { setup: ["sleep 4", "true"] };
  writeFileSync(
    join(work, "tasks.jsonl"),
    [
      task("env-first", { environment: slow }),
      task("env-again", { environment: slow }),
      task("env-broken", { environment: { setup: ["true", "exit 3"] } }),
      task("own-image", { image: MISSING }),
    ].join("\n") + "\n",
  );
});

afterAll(async () => {
  const engine = await Engine.connect();
  await removeImages(engine, await environmentImages(engine, join(work, "repo")));
  rmSync(work, { recursive: true, force: true });
});

describe("eval's images", () => {
  it("names the image each task ran in and its environment's build time, outside the task's time", async () => {
    const run = await evalCli(
      "tasks.jsonl",
      "--agent",
      "patch",
      "--image",
      inject("sandboxImage"),
      "--concurrency",
      "1",
      "--pull",
      "never",
      "--out",
      "out",
    );
    expect(run.code, run.stderr).toBe(0);
    const first = result("out", "env-first");
    const again = result("out", "env-again");
    expect(first.status).toBe("resolved");
    expect(first.environment_image).toMatch(/^drydock-env:/);
    expect(again.environment_image).toBe(first.environment_image);
    expect(first.environment_build_ms).toBeGreaterThanOrEqual(4000);
    // The second task found the image built: nothing to wait for.
    expect(again.environment_build_ms).toBe(0);
    // The build is not the task's: its start (box start) and duration leave it out, and the
    // attempt's start is after the build.
    expect(first.timings_ms.start).toBeLessThan(first.environment_build_ms!);
    const runJson = JSON.parse(readFileSync(join(work, "out", "run.json"), "utf8"));
    expect(Date.parse(first.started_at) - Date.parse(runJson.started_at)).toBeGreaterThanOrEqual(
      first.environment_build_ms!,
    );
    expect(runJson.environment_images).toEqual([
      { image: first.environment_image, build_ms: first.environment_build_ms, attempts: 2 },
    ]);
    const junit = readFileSync(join(work, "out", "junit.xml"), "utf8");
    expect(junit).toContain(`<property name="environment_image" value="${first.environment_image}"/>`);
    expect(junit).toContain(`<property name="environment_build_ms" value="${first.environment_build_ms}"/>`);
    expect(readFileSync(join(work, "out", "report.html"), "utf8")).toContain(
      `"environment_image":"${first.environment_image}"`,
    );

    // A failing inline environment: the task's line, then the definition's own line, and the eval to run again.
    const broken = result("out", "env-broken");
    expect(broken.status).toBe("setup_error");
    expect(broken.environment_image).toBeUndefined();
    expect(broken.error).toMatch(
      /^the task's environment did not build: tasks\.jsonl:3: environment, line 3 of the definition: setup\[2\] failed with exit code 3: exit 3\n/,
    );
    expect(broken.error).toMatch(/fix the command \(or what it needs\) and run the same drydock eval again/);
    expect(broken.error).not.toMatch(/env build|environment:\d/);

    // A task's own image that is not there: how to load or build it, never drydock image build.
    const own = result("out", "own-image");
    // --pull never: the test reaches no registry; the engine lacks the image, and the error says
    // how to get it.
    expect(own.status).toBe("setup_error");
    expect(own.error).toContain(`docker pull ${MISSING}`);
    expect(own.error).not.toMatch(/drydock image build/);
  });

  it("one inline definition in three task files builds one image, which each result names", async () => {
    const definition = { setup: ["sleep 1", "echo three files"] };
    const results: AttemptResult[] = [];
    for (const name of ["a", "b", "c"]) {
      writeFileSync(
        join(work, `three-${name}.jsonl`),
        JSON.stringify({
          id: `three-${name}`,
          repo: "repo",
          prompt: "nothing to do",
          test_cmd: "true",
          patch: "",
          environment: definition,
        }) + "\n",
      );
      const run = await evalCli(
        `three-${name}.jsonl`,
        "--agent",
        "patch",
        "--image",
        inject("sandboxImage"),
        "--out",
        `out-three-${name}`,
      );
      expect(run.code, run.stderr).toBe(0);
      results.push(result(`out-three-${name}`, `three-${name}`));
    }
    const [a, b, c] = results;
    expect(a!.environment_image).toMatch(/^drydock-env:/);
    expect([b!.environment_image, c!.environment_image]).toEqual([
      a!.environment_image,
      a!.environment_image,
    ]);
    // Built for the first file only; the others found it.
    expect(a!.environment_build_ms).toBeGreaterThan(0);
    expect([b!.environment_build_ms, c!.environment_build_ms]).toEqual([0, 0]);
  });

  it("--image that is not there: how to load or build it, exit 2", async () => {
    const run = await evalCli("tasks.jsonl", "--agent", "patch", "--image", MISSING, "--out", "none");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `--image: ${MISSING} is not in the engine; load or build the image first: \`docker pull ${MISSING}\``,
    );
    expect(run.stderr).not.toMatch(/drydock image build/);
  });
});
