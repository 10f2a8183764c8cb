import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../../src/tools/tool.js";
import { errorText, everyTool, toolClient } from "./registered-tools.js";

const fakeTool = defineTool({
  name: "fake",
  title: "Fake",
  description: "A tool for tests.",
  inputSchema: { mode: z.string().optional(), replace_branch: z.boolean().optional() },
  outputSchema: { mode: z.string().optional() },
  async run(args) {
    return { mode: args.mode };
  },
});

describe("registerTools", () => {
  it("refuses an unknown argument on every tool, naming it and the tool's own arguments", async () => {
    await using c = await toolClient();
    for (const tool of everyTool) {
      const reply = errorText(await c.callTool({ name: tool.name, arguments: { foo: 1 } }));
      const text = tool.errorReply ? (JSON.parse(reply) as { error: string }).error : reply;
      expect(text, tool.name).toMatch(new RegExp(`^foo: is not an argument of ${tool.name}; `));
      for (const name of Object.keys(tool.inputSchema)) expect(text, tool.name).toContain(name);
    }
  });

  it("suggests the argument a misspelt name was meant to be", async () => {
    await using c = await toolClient([fakeTool]);
    const text = errorText(await c.callTool({ name: "fake", arguments: { replaceBranch: true, Mode: "x" } }));
    expect(text).toBe(
      "replaceBranch, Mode: are not arguments of fake; its arguments are mode, replace_branch. Did you mean replace_branch for replaceBranch, mode for Mode?",
    );
  });

  it("names every problem of the arguments in one reply, a missing one included", async () => {
    await using c = await toolClient(everyTool.filter((t) => t.name === "bash"));
    const text = errorText(await c.callTool({ name: "bash", arguments: { timeout_s: 0, restart: "yes" } }));
    expect(text).toMatch(/^command: is required/);
    expect(text).toMatch(/; also /);
    expect(text).toMatch(/timeout_s: /);
    expect(text).toMatch(/restart: /);
    expect(text).not.toMatch(/more problem/);
    const unknown = errorText(await c.callTool({ name: "bash", arguments: { cmd: "ls" } }));
    expect(unknown).toMatch(/^cmd: is not an argument of bash; .*; also command: is required/);
  });

  it("answers a tool's error in its own JSON when it has one, as isError", async () => {
    await using c = await toolClient([
      { ...fakeTool, errorReply: (message) => ({ ok: false, why: message }) },
    ]);
    const text = errorText(await c.callTool({ name: "fake", arguments: { mode: 3 } }));
    expect(JSON.parse(text)).toEqual({ ok: false, why: expect.stringMatching(/^mode: /) });
  });

  it("lists every input schema as closed (additionalProperties false) and without noise", async () => {
    await using c = await toolClient();
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(everyTool.map((t) => t.name));
    for (const tool of tools) {
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      const json = JSON.stringify(tool);
      expect(json, tool.name).not.toContain("$schema");
      expect(json, tool.name).not.toContain(String(Number.MAX_SAFE_INTEGER));
    }
  });

  it("does not advertise tools.listChanged: the list never changes", async () => {
    await using c = await toolClient();
    expect(c.getServerCapabilities()?.tools).toEqual({});
  });

  it("answers an unknown tool with an error naming it", async () => {
    await using c = await toolClient();
    expect(errorText(await c.callTool({ name: "no_such_tool", arguments: {} }))).toMatch(
      /^no tool named "no_such_tool" on this server; tools\/list names the \d+ it serves/,
    );
  });
});
