/**
 * An eval across three Docker engines: the host's, and two of the test's own, each in a network
 * namespace of its own and reachable only over verified TLS with certificates the test makes.
 * Engine B has the sandbox image already; engine A has none, so the eval sends it there. While B
 * runs an attempt its dockerd is killed (SIGKILL): the attempt runs again on another engine, its
 * result says so, and every task has its result.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AttemptResult } from "../../src/eval/attempt-result.js";
import type { RunInfo } from "../../src/eval/results-dir.js";
import { LABEL_EVAL_TASK } from "../../src/eval/run-attempt.js";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_STATE } from "../../src/engine/labels.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";
import { TlsEngines, type TlsEngine } from "../helpers/tls-engines.mjs";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const TASKS = 9;
const CALC = "def add(a, b):\n    return a - b\n";
const CALC_TEST = `import unittest

from calc import add


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
`;

describe("eval across three engines, one killed mid-run", () => {
  let engines: TlsEngines;
  let a: TlsEngine;
  let b: TlsEngine;
  let work: string;
  let state: string;
  let calc: TempRepo;
  const image = () => inject("sandboxImage");
  const home = process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock";

  beforeAll(async () => {
    engines = await TlsEngines.start(2);
    [a, b] = engines.engines as [TlsEngine, TlsEngine];
    work = mkdtempSync(join(tmpdir(), "drydock-engines-"));
    state = mkdtempSync(join(tmpdir(), "drydock-engines-state-"));
    calc = tempRepo({ "calc.py": CALC, "test_calc.py": CALC_TEST });
    calc.write("calc.py", CALC.replace("a - b", "a + b"));
    const gold = git(calc.path, "diff");
    git(calc.path, "checkout", "-q", "calc.py");
    cpSync(calc.path, join(work, "calc"), { recursive: true });
    // Each attempt's tests take a few seconds, so the kill finds one running on B.
    const tasks = Array.from({ length: TASKS }, (_, i) => ({
      id: `calc-${i + 1}`,
      repo: "calc",
      prompt: "Fix add()",
      test_cmd: "sleep 6 && python3 -m unittest -v",
      patch: gold,
    }));
    writeFileSync(join(work, "tasks.jsonl"), tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
    // B is given the image beforehand (so it runs attempts from the start); A gets it from the eval.
    await new Promise<void>((resolve, reject) => {
      const copy = spawn(
        "sh",
        [
          ...[
            "-c",
            'docker save "$1" | DOCKER_HOST="$2" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$3" docker load -q',
          ],
          ...["sh", image(), b.url, engines.clientTlsDir],
        ],
        { stdio: "ignore" },
      );
      copy.on("error", reject);
      copy.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`docker load exited ${code}`))));
    });
  }, 300_000);

  afterAll(async () => {
    await engines?.[Symbol.asyncDispose]();
    calc?.[Symbol.dispose]();
    if (work) rmSync(work, { recursive: true, force: true });
    if (state) {
      const shared = await Engine.connect();
      const left = (await shared.listBoxes(LABEL_EVAL_TASK)).filter((x) => x.labels[LABEL_STATE] === state);
      rmSync(state, { recursive: true, force: true });
      expect(left).toEqual([]);
    }
  });

  it("places attempts on every engine, sends the image where it is missing, and reruns elsewhere what the dead engine ran", async () => {
    expect(b.docker(["image", "inspect", "--format", "{{.Id}}", image()]).trim()).toMatch(/^sha256:/);
    expect(a.docker(["images", "-q"]).trim()).toBe("");
    // doctor checks each engine: A answers over TLS and lacks the image, which eval will send.
    const before = await doctor([
      "--engine",
      home,
      "--engine",
      a.url,
      "--engine-tls-dir",
      engines.clientTlsDir,
    ]);
    expect(before.code, before.stdout).toBe(0);
    expect(before.checks.find((c) => c.name === `engine ${a.url}`)).toMatchObject({ ok: true });
    expect(before.checks.find((c) => c.name === `image on ${a.url}`)).toMatchObject({
      ok: true,
      detail: `${image()} is missing; drydock eval sends it from ${home} before the first attempt there`,
    });
    const out = join(work, "out");
    const child = spawn(
      process.execPath,
      [
        ...[cli, "eval", join(work, "tasks.jsonl"), "--agent", "patch", "--no-env", "--image", image()],
        ...["--engine", home, "--engine", a.url, "--engine", `${b.url}?tls=${engines.clientTlsDir}`],
        ...["--engine-tls-dir", engines.clientTlsDir, "--concurrency", "3", "--memory-mb", "512"],
        ...["--out", out],
      ],
      {
        cwd: work,
        env: { ...process.env, DRYDOCK_STATE_DIR: state, DRYDOCK_POOL: "0" },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));

    // Kill B's dockerd once one of the run's boxes has been running there for a moment.
    let killedWhileRunning = false;
    for (let i = 0; i < 600 && !killedWhileRunning; i++) {
      const running = b
        .docker(["ps", "--filter", `label=${LABEL_STATE}=${state}`, "--format", "{{.ID}}"])
        .trim();
      if (running) {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        b.kill();
        killedWhileRunning = true;
      } else await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(killedWhileRunning).toBe(true);
    const code = await exited;
    expect(code, stderr).toBe(0);

    const run = JSON.parse(readFileSync(join(out, "run.json"), "utf8")) as RunInfo;
    const results = Array.from(
      { length: TASKS },
      (_, i) =>
        JSON.parse(readFileSync(join(out, "tasks", `calc-${i + 1}`, "result.json"), "utf8")) as AttemptResult,
    );
    // Every task has its result, resolved: nothing was lost with the engine.
    expect(results.map((r) => r.status)).toEqual(Array(TASKS).fill("resolved"));
    expect(run.interrupted).toBeUndefined();
    const [onHome, onA, onB] = run.engines!;
    expect(onHome).toMatchObject({ name: home });
    expect(onA).toMatchObject({ name: a.url });
    expect(onA!.died).toBeUndefined();
    expect(onB).toMatchObject({ name: b.url, died: `${b.url} stopped answering` });
    expect(onA!.attempts).toBeGreaterThanOrEqual(1);
    expect(onB!.attempts).toBeGreaterThanOrEqual(1);
    // What B was running ran again elsewhere, and says so.
    const retried = results.filter((r) => r.retried_after);
    expect(retried.length).toBeGreaterThanOrEqual(1);
    for (const r of retried) {
      expect(r.retried_after).toBe(`engine ${b.url} died`);
      expect([home, a.url]).toContain(r.engine);
    }
    expect(stderr).toContain(`engine ${b.url} died`);
    expect(results.every((r) => [home, a.url, b.url].includes(r.engine!))).toBe(true);
    expect(results.some((r) => r.engine === a.url)).toBe(true);
    // A got the very image the host has (sent, not built), and kept no box.
    const shared = await Engine.connect();
    expect(a.docker(["image", "inspect", "--format", "{{.Id}}", image()]).trim()).toBe(
      await shared.imageId(image()),
    );
    expect(a.docker(["ps", "-aq"]).trim()).toBe("");
    // doctor says B is gone, and fails.
    const after = await doctor([
      "--engine",
      a.url,
      "--engine",
      b.url,
      "--engine-tls-dir",
      engines.clientTlsDir,
    ]);
    expect(after.code).toBe(1);
    expect(after.checks.find((c) => c.name === `engine ${a.url}`)).toMatchObject({ ok: true });
    expect(after.checks.find((c) => c.name === `engine ${b.url}`)).toMatchObject({
      ok: false,
      detail: expect.stringContaining(`no Docker Engine answers (${b.url}:`),
    });
  }, 420_000);

  it("refuses an ssh:// engine, and the aider agent on a tcp:// engine, before any box starts", async () => {
    const run = await cliRun([
      "eval",
      join(work, "tasks.jsonl"),
      "--agent",
      "patch",
      "--engine",
      "ssh://me@far",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /--engine: ssh:\/\/me@far: ssh:\/\/ engines are not supported; forward the engine's socket/,
    );
    const aider = await cliRun(["eval", join(work, "tasks.jsonl"), "--engine", "tcp://127.0.0.1:9"]);
    expect(aider.code).toBe(2);
    expect(aider.stderr).toMatch(
      /--engine: the aider agent reaches its model through a socket on this machine/,
    );
  });
});

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

function cliRun(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

async function doctor(args: string[]): Promise<{ code: number | null; stdout: string; checks: Check[] }> {
  const run = await cliRun(["doctor", "--json", ...args]);
  return { ...run, checks: JSON.parse(run.stdout) as Check[] };
}
