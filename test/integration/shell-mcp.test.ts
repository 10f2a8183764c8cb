/**
 * The bash tool's promises over MCP, with the SDK's client against a real server and real boxes:
 * the coding-tools seed's stdout, stderr and exit code, and a command past its limit or cancelled
 * by the client stopping as a whole, with the shell's state from before it kept.
 */
import { describe, expect, it } from "vitest";
import { inMemoryDrydock, ok, type ToolReply } from "../helpers/mcp-client.js";
import { STRUCTURED_REPLY_META } from "../../src/util/reply-meta.js";
import { tempRepo } from "../helpers/repos.js";

const until = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

describe("the bash tool over MCP", () => {
  it("lists stdout, stderr and exit_code in its output schema, with hints that it is destructive and closed-world", async () => {
    using repo = tempRepo();
    await using drydock = await inMemoryDrydock({ repo: repo.path, outputSchemas: true });
    const { tools } = await drydock.client.listTools();
    const bash = tools.find((t) => t.name === "bash")!;
    // No merged `output`: the text has the streams merged, the object has them apart (once each).
    expect(Object.keys(bash.outputSchema!.properties!).sort()).toEqual(
      ["stdout", "stderr", "exit_code", "timed_out", "truncated", "restarted", "note"].sort(),
    );
    expect(bash.annotations).toMatchObject({
      destructiveHint: true,
      openWorldHint: false,
      readOnlyHint: false,
    });
    expect(tools.find((t) => t.name === "task_done")!.annotations).toMatchObject({
      destructiveHint: false,
      openWorldHint: false,
    });
  });

  it("carries 1 MB of output once for the model's text and once for the object, or once in all", async () => {
    using repo = tempRepo();
    await using drydock = await inMemoryDrydock({ repo: repo.path });
    const line = "a line of output seventy bytes or so long, printed again and again\n";
    const args = { command: `yes '${line.trim()}' | head -c 1000000`, max_output_bytes: 2_000_000 };
    const copies = (reply: unknown) => JSON.stringify(reply).split(line.trim()).length - 1;

    const plain = (await drydock.client.callTool({ name: "bash", arguments: args })) as ToolReply;
    const object = ok(plain);
    expect(object.stdout).toHaveLength(1_000_000);
    expect(object).not.toHaveProperty("output");
    const perOutput = copies(object.stdout);
    expect(perOutput).toBeGreaterThan(14_000);
    expect(plain.content).toHaveLength(1);
    expect(plain.content[0]!.text.endsWith("\n[exit code 0]")).toBe(true);
    expect(copies(plain)).toBe(2 * perOutput);
    expect(JSON.stringify(plain).length).toBeLessThan(2.1 * 1_000_000);

    const structured = (await drydock.client.callTool({
      name: "bash",
      arguments: args,
      _meta: STRUCTURED_REPLY_META,
    })) as ToolReply;
    expect(structured.content).toEqual([]);
    expect(structured.structuredContent!.stdout).toHaveLength(1_000_000);
    expect(copies(structured)).toBe(perOutput);
    expect(JSON.stringify(structured).length).toBeLessThan(1.1 * 1_000_000);
  });

  it("shows both streams merged in the text and apart in the object", async () => {
    using repo = tempRepo();
    await using drydock = await inMemoryDrydock({ repo: repo.path });
    const reply = (await drydock.client.callTool({
      name: "bash",
      arguments: { command: "echo out; sleep 0.2; echo err >&2; sleep 0.2; echo out2" },
    })) as ToolReply;
    expect(ok(reply)).toMatchObject({ stdout: "out\nout2\n", stderr: "err\n", exit_code: 0 });
    expect(reply.content[0]!.text).toBe("out\nerr\nout2\n[exit code 0]");
  });

  it("keeps the seed's contract: stdout, stderr and the exit code, even one that ends the shell", async () => {
    using repo = tempRepo();
    await using drydock = await inMemoryDrydock({ repo: repo.path });
    const call = async (args: Record<string, unknown>) =>
      ok(await drydock.client.callTool({ name: "bash", arguments: args }));
    expect(
      await call({ command: "echo out; echo err >&2; exit_with() { return $1; }; exit_with 5" }),
    ).toMatchObject({
      stdout: "out\n",
      stderr: "err\n",
      exit_code: 5,
      timed_out: false,
      restarted: false,
    });
    await call({ command: "cd /tmp" });
    const exited = await call({ command: "false; exit 3" });
    expect(exited).toMatchObject({ exit_code: 3, restarted: true, timed_out: false });
    expect(exited.note).toMatch(/the shell exited with status 3/);
    expect(await call({ command: "pwd" })).toMatchObject({
      stdout: "/tmp\n",
      exit_code: 0,
      restarted: false,
    });
  });

  it("stops a command past timeout_s as a whole and keeps the state from before it", async () => {
    using repo = tempRepo();
    await using drydock = await inMemoryDrydock({ repo: repo.path });
    const call = async (args: Record<string, unknown>) =>
      ok(await drydock.client.callTool({ name: "bash", arguments: args }));
    await call({ command: "cd /tmp && export KEEP=kept" });
    const started = Date.now();
    const r = await call({
      command: "export MINE=1; (sleep 6; touch /workspace/bg) & sleep 8; echo AFTER > /workspace/after.txt",
      timeout_s: 2,
    });
    expect(r).toMatchObject({ timed_out: true, exit_code: null, restarted: true });
    expect(r.note).toMatch(
      /^the command timed out after 2 s and was stopped as a whole: .*nothing of it is left running/,
    );
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(await call({ command: 'echo "$PWD $KEEP ${MINE-unset}"' })).toMatchObject({
      stdout: "/tmp kept unset\n",
    });
    await until(started + 10_000);
    expect(
      await call({
        command: "ls /workspace/after.txt /workspace/bg 2>&1; ps -eo args | grep '^sleep [0-9]'",
      }),
    ).toMatchObject({
      stdout: expect.not.stringMatching(/^\/workspace|sleep/m),
      exit_code: 1,
    });
  });

  it("stops a command the client cancels, as a whole, before the next call runs", async () => {
    using repo = tempRepo();
    await using drydock = await inMemoryDrydock({ repo: repo.path });
    const call = async (args: Record<string, unknown>) =>
      ok(await drydock.client.callTool({ name: "bash", arguments: args }));
    await call({ command: "cd /tmp && export KEEP=kept" });
    const started = Date.now();
    const controller = new AbortController();
    const cancelled = drydock.client.callTool(
      {
        name: "bash",
        arguments: {
          command:
            "export MINE=1; setsid sh -c 'sleep 6; touch /workspace/s' & sleep 8; echo AFTER > /workspace/after.txt",
        },
      },
      undefined,
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort("changed my mind"), 1_500);
    await expect(cancelled).rejects.toThrow();
    // The next call waits for the stop and the new shell.
    expect(await call({ command: 'echo "$PWD $KEEP ${MINE-unset}"' })).toMatchObject({
      stdout: "/tmp kept unset\n",
      restarted: false,
    });
    expect(Date.now() - started).toBeLessThan(6_000);
    await until(started + 10_000);
    const after = await call({
      command:
        "ls /workspace/after.txt /workspace/s 2>&1; ps -eo args | grep -E '^(sleep [0-9]|sh -c)' | grep -v ' drydock-box$'",
    });
    expect(after.stdout).not.toMatch(/^\/workspace|sleep|sh -c/m);
  });
});
