import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../../src/tools/tool.js";
import { redactValue } from "../../../src/server/register-tools.js";
import { errorText, everyTool, toolClient } from "./registered-tools.js";
import { secretRedactor } from "../../../src/gateway/redact.js";
import { STRUCTURED_REPLY_META } from "../../../src/util/reply-meta.js";

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

/** A tool whose result has a field only its text shows, as the bash tool's merged output. */
const printingTool = defineTool({
  name: "printing",
  title: "Printing",
  description: "A tool for tests.",
  inputSchema: { text: z.string(), fail: z.boolean().optional() },
  outputSchema: { stdout: z.string(), exit_code: z.number() },
  textOnlySchema: { output: z.string() },
  replyText: (result) => `${result.output}\n[exit code ${result.exit_code}]`,
  async run(args) {
    if (args.fail) throw new Error(`failed on ${args.text}`);
    return { stdout: args.text, output: args.text, exit_code: 0 };
  },
});

type Reply = { content: Array<{ type: string; text: string }>; structuredContent?: Record<string, unknown> };

describe("registerTools: what a reply carries", () => {
  it("shows a text-only field in the text and leaves it out of structuredContent and the listed schema", async () => {
    await using c = await toolClient([printingTool], {}, { outputSchemas: true });
    const reply = (await c.callTool({ name: "printing", arguments: { text: "hello" } })) as Reply;
    expect(reply.content).toEqual([{ type: "text", text: "hello\n[exit code 0]" }]);
    expect(reply.structuredContent).toEqual({ stdout: "hello", exit_code: 0 });
    const { tools } = await c.listTools();
    expect(Object.keys(tools[0]!.outputSchema!.properties!)).toEqual(["stdout", "exit_code"]);
  });

  it("sends no text to a client that reads only structuredContent, and still the text of an error", async () => {
    await using c = await toolClient([printingTool]);
    const reply = (await c.callTool({
      name: "printing",
      arguments: { text: "hello" },
      _meta: STRUCTURED_REPLY_META,
    })) as Reply;
    expect(reply.content).toEqual([]);
    expect(reply.structuredContent).toEqual({ stdout: "hello", exit_code: 0 });
    const failed = await c.callTool({
      name: "printing",
      arguments: { text: "x", fail: true },
      _meta: STRUCTURED_REPLY_META,
    });
    expect(errorText(failed)).toMatch(/failed on x$/);
    // Any other value, or none, gets the text.
    const other = (await c.callTool({
      name: "printing",
      arguments: { text: "hi" },
      _meta: { "drydock/reply": "text" },
    })) as Reply;
    expect(other.content[0]!.text).toBe("hi\n[exit code 0]");
  });

  it("carries a megabyte of output once in the text and once in the object, or once in all", async () => {
    await using c = await toolClient([printingTool]);
    const big = "a line of output\n".repeat(60_000);
    const both = JSON.stringify(await c.callTool({ name: "printing", arguments: { text: big } }));
    expect(both.split("a line of output").length - 1).toBe(2 * 60_000);
    const once = JSON.stringify(
      await c.callTool({ name: "printing", arguments: { text: big }, _meta: STRUCTURED_REPLY_META }),
    );
    expect(once.split("a line of output").length - 1).toBe(60_000);
    expect(once.length).toBeLessThan(big.length * 1.1);
  });

  it("redacts a secret in every string of the reply, one JSON would escape included", async () => {
    const secret = 'sk-"quoted\\secret';
    await using c = await toolClient([printingTool], {}, {}, secretRedactor([secret]));
    const reply = (await c.callTool({ name: "printing", arguments: { text: `key=${secret}` } })) as Reply;
    expect(JSON.stringify(reply)).not.toContain("quoted");
    expect(reply.structuredContent).toEqual({ stdout: "key=[redacted]", exit_code: 0 });
    expect(reply.content[0]!.text).toBe("key=[redacted]\n[exit code 0]");
  });
});

describe("redactValue", () => {
  it("copies a result as JSON would: a key named __proto__ stays a key, undefined fields go", () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "list": [1, "sk-secret-value"]}') as object;
    const copy = redactValue(
      { value: parsed, gone: undefined, at: new Date(0) },
      secretRedactor(["sk-secret-value"]),
    );
    expect(JSON.stringify(copy)).toBe(
      '{"value":{"__proto__":{"polluted":true},"list":[1,"[redacted]"]},"at":"1970-01-01T00:00:00.000Z"}',
    );
    expect(Object.getPrototypeOf((copy as { value: object }).value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
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
