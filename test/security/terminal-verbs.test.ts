/**
 * Every command-line verb that prints text a repository or a box wrote prints it escaped: a
 * repository whose environment definition (the `env` and `setup` a person reviews before a build)
 * holds screen clears, OSC 52 clipboard writes, BEL, a lone CR, a C1 CSI and bidi overrides and
 * isolates, and a box whose commands, output, task and checkpoint hold the same, are run through
 * `env show` (text and JSON), `env build`, `env list`, `sessions list/show/log/checkpoints/diff
 * --stat`, `tasks show/list`, `eval`, `doctor` and the error paths; none of those bytes reaches
 * stdout or stderr raw. `sessions diff` (the patch itself, which `git apply` reads) is the one
 * documented raw stream, with `drydock run`'s command output.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
/** Bytes a terminal acts on: none may reach it (drydock's own newlines aside). */
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** The same tricks written as YAML double-quoted escapes: ESC, OSC 52 with BEL, CR, C1 CSI, bidi. */
const YAML_TRICKS = String.raw`\e[2J\e]52;c;ZXZpbA==\a\rlooks fine\x9b31m\u202etxt\u2066x\u2069\a`;
/** And as the shell's printf reads them. */
const PRINTF_TRICKS = String.raw`\033[2J\033]52;c;ZXZpbA==\007\rlooks fine\302\23331m\342\200\256txt\342\201\246x\342\201\251\007`;
/** And as they are: a command's text, a task's title, a checkpoint's name. */
const TRICKS = "\x1b[2J\x1b]52;c;ZXZpbA==\x07\rlooks fine\u009b31m\u202etxt\u2066x\u2069\x07";

interface Printed {
  code: number;
  stdout: string;
  stderr: string;
}

describe("every verb that prints a repository's or a box's text", () => {
  let repo: TempRepo;
  let broken: TempRepo;
  let state: string;
  let out: string;
  let client: Client;
  let id: string;
  /** `env build`, run first: the setup's output is printed by the build that runs it. */
  let built: Printed;
  const env = () => ({ ...process.env, DRYDOCK_STATE_DIR: state }) as Record<string, string>;
  const drydock = async (...args: string[]): Promise<Printed> => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args], {
        env: env(),
        timeout: 300_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return {
        code: typeof e.code === "number" ? e.code : -1,
        stdout: e.stdout ?? "",
        stderr: e.stderr ?? "",
      };
    }
  };
  const expectNoneRaw = (printed: Printed, what: string) => {
    expect(printed.stdout, `${what}: stdout`).not.toMatch(RAW);
    expect(printed.stderr, `${what}: stderr`).not.toMatch(RAW);
  };

  beforeAll(async () => {
    repo = tempRepo({
      // Its own content, so the engine's build cache holds no earlier run's setup: the setup runs
      // and prints.
      "README.md": `hello ${Math.random()}\n`,
      ".drydock/environment.yaml": [
        "env:",
        `  GREETING: "hi ${YAML_TRICKS}"`,
        "setup:",
        // Single-quoted YAML: the shell's printf reads the escapes.
        `  - 'printf ''${PRINTF_TRICKS}\\n'''`,
        `  - "true # ${YAML_TRICKS}"`,
        "",
      ].join("\n"),
    });
    broken = tempRepo({
      "README.md": "hello\n",
      ".drydock/environment.yaml": `packages: ["lib${YAML_TRICKS}"]\n`,
    });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    out = mkdtempSync(join(tmpdir(), "drydock-eval-out-"));
    built = await drydock("env", "build", "--repo", repo.path, "--image", inject("sandboxImage"));
    client = new Client({ name: "terminal-verbs", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          cli,
          "serve",
          "--repo",
          repo.path,
          "--image",
          inject("sandboxImage"),
          "--pool",
          "0",
          "--tools",
          "all",
        ],
        env: env(),
        stderr: "ignore",
      }),
    );
    id = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
    for (const command of [
      `printf '${PRINTF_TRICKS}\\n'; echo '${TRICKS}' > /dev/null`,
      `printf 'x' > "$(printf 'file${PRINTF_TRICKS}.txt')"`,
    ]) {
      ok(await client.callTool({ name: "bash", arguments: { session_id: id, command } }));
    }
    ok(
      await client.callTool({
        name: "create_new_task",
        arguments: { session_id: id, title: `Fix ${TRICKS.replace("\r", "")}`, body: `step ${TRICKS}` },
      }),
    );
    ok(
      await client.callTool({
        name: "session_checkpoint",
        arguments: { session_id: id, name: "before", message: `saved ${TRICKS}` },
      }),
    );
  }, 600_000);

  afterAll(async () => {
    await client?.close();
    repo?.[Symbol.dispose]();
    broken?.[Symbol.dispose]();
    for (const dir of [state, out]) if (dir) rmSync(dir, { recursive: true, force: true });
    // The environment images this test built for its repository.
    const engine = await Engine.connect();
    const images = await engine.docker.listImages({ filters: { label: [`drydock.env.repo=${repo.path}`] } });
    for (const image of images)
      await engine.docker
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => {});
  });

  it("env show prints the definition's env and setup escaped, as text and as JSON", async () => {
    const text = await drydock("env", "show", "--repo", repo.path, "--image", inject("sandboxImage"));
    expect(text.code, text.stderr).toBe(0);
    expectNoneRaw(text, "env show");
    expect(text.stdout).toContain(
      "env: GREETING=hi \\e[2J\\e]52;c;ZXZpbA==\\x07\\rlooks fine\\x9b31m\\u202etxt",
    );
    expect(text.stdout).toContain("true # \\e[2J");
    const json = await drydock(
      "env",
      "show",
      "--repo",
      repo.path,
      "--image",
      inject("sandboxImage"),
      "--json",
    );
    expectNoneRaw(json, "env show --json");
    // JSON reads back as the very text of the definition.
    const definition = (JSON.parse(json.stdout) as { definition: { env: Record<string, string> } })
      .definition;
    expect(definition.env.GREETING).toBe(`hi ${TRICKS}`);
  });

  it("env build's build output, and env list, print nothing raw", async () => {
    expect(built.code, built.stderr).toBe(0);
    expectNoneRaw(built, "env build");
    // The setup's printf ran in the build and its output was shown (the build's own reader drops
    // well-formed ANSI sequences; what is left is escaped).
    expect(built.stderr).toContain("looks fine");
    const listed = await drydock("env", "list", "--repo", repo.path);
    expectNoneRaw(listed, "env list");
    expectNoneRaw(await drydock("env", "list", "--repo", repo.path, "--json"), "env list --json");
  });

  it("sessions list, show, log, checkpoints and diff --stat, and tasks, print nothing raw", async () => {
    for (const args of [
      ["sessions", "list"],
      ["sessions", "list", "--json"],
      ["sessions", "show", id],
      ["sessions", "show", id, "--json"],
      ["sessions", "log", id],
      ["sessions", "log", id, "--json"],
      ["sessions", "checkpoints", id],
      ["sessions", "checkpoints", id, "--json"],
      ["sessions", "diff", id, "--stat"],
      ["tasks", "show", id],
      ["tasks", "show", id, "--json"],
      ["tasks", "list"],
      ["tasks", "list", "--json"],
    ]) {
      const printed = await drydock(...args);
      expect(printed.code, `${args.join(" ")}: ${printed.stderr}`).toBe(0);
      expectNoneRaw(printed, args.join(" "));
    }
    // What the box printed (the log's output tail) and the command are there, escaped.
    const shown = await drydock("sessions", "show", id);
    expect(shown.stdout).toContain("\\e[2J");
  });

  it("the error paths, doctor and eval print nothing raw", async () => {
    const refused = await drydock("env", "show", "--repo", broken.path, "--image", inject("sandboxImage"));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("is not a Debian package name");
    expectNoneRaw(refused, "env show of a broken definition");
    for (const args of [
      ["sessions", "show", `${TRICKS}`],
      ["sessions", "log", "0123456789ab"],
      ["tasks", "show", `x${TRICKS}`],
      ["doctor", "--engine-only"],
      ["doctor", "--image", `img${TRICKS}`],
    ]) {
      expectNoneRaw(await drydock(...args), args.join(" "));
    }
    // A task file whose task names a repository and an id made of the same tricks.
    const tasks = join(out, "..", `tasks-${id}.jsonl`);
    writeFileSync(
      tasks,
      `${JSON.stringify({ id: `t${TRICKS}`, repo: `/nowhere/${TRICKS}`, prompt: TRICKS, test_cmd: `true ${TRICKS}` })}\n`,
    );
    try {
      expectNoneRaw(
        await drydock(
          "eval",
          tasks,
          "--agent",
          "patch",
          "--out",
          join(out, "run"),
          "--image",
          inject("sandboxImage"),
        ),
        "eval",
      );
      expectNoneRaw(
        await drydock("eval", "validate", tasks, "--out", join(out, "validate")),
        "eval validate",
      );
    } finally {
      rmSync(tasks, { force: true });
    }
  });
});
