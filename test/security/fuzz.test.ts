/**
 * A fuzz run over every tool's arguments through a real MCP client (in-memory transport) against a
 * real server with real boxes. Arguments are drawn from each tool's own input schema, with hostile
 * strings (traversal, NUL, control characters, huge, JSONPath and shell syntax), wrong types, extra
 * keys and plain junk. Whatever comes in, every call must be answered with a result (an error
 * result is fine) whose text is not a stack trace and whose structured content agrees with it; no
 * call may throw, hang or take the server or the session down.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverExtensions } from "../../src/server/extensions.js";
import { parseArgs } from "../../src/tools/parse-args.js";
import { inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
}

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "",
      " ",
      ".",
      "..",
      "../../../../etc/passwd",
      "/etc/shadow",
      "/workspace/../root",
      "/workspace/.git/config",
      ".git/hooks/pre-commit",
      "README.md",
      "data.json",
      "src/app.py",
      "/proc/self/environ",
      "/run/drydock/gateway.sock",
      "\u0000",
      "a\u0000b",
      "line\nline",
      "\r\n",
      "\u001b[2J\u001b[H",
      "$(id)",
      "`id`",
      "; rm -rf /workspace",
      "--help",
      "-rf",
      "%s%s%n",
      "$",
      "$..*",
      "$[?(@.a == 1)]",
      "$.a[(@.length-1)]",
      "$['__proto__']",
      "constructor.prototype",
      "HEAD~999999",
      "refs/heads/../../x",
      "t1",
      "t999999",
      "default",
      "job-000000000000",
      "🦀\u200b\u202e",
      "x".repeat(10_000),
    ),
  },
);

const anyJson = fc.jsonValue({ maxDepth: 3 });

/** Values shaped by a JSON schema, hostile where the schema leaves room. */
function fromSchema(schema: JsonSchema): fc.Arbitrary<unknown> {
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map(fromSchema));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      return hostileString;
    case "integer":
      return fc.oneof(
        fc.integer({
          min: Math.max(schema.minimum ?? -1_000, -1_000),
          max: Math.min(schema.maximum ?? 1_000, 1_000),
        }),
        fc.constantFrom(0, -1, 2 ** 31, Number.MAX_SAFE_INTEGER),
      );
    case "number":
      return fc.oneof(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.constantFrom(0, -1, 0.5, 1e308),
      );
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(schema.items ? fromSchema(schema.items) : anyJson, { maxLength: 4 });
    case "object": {
      const props = Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([k, v]) => [k, fromSchema(v)]),
      );
      const required = (schema.required ?? []).filter((k) => k in props);
      return fc.record(props, { requiredKeys: required });
    }
    default:
      return anyJson;
  }
}

/** A tool's arguments: mostly schema-shaped, sometimes with a wrong-typed field, extra keys, or junk. */
function argumentsFor(schema: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  // Most calls use the default session, so they reach a box instead of "session not found".
  const shaped = fc
    .tuple(fromSchema({ ...schema, type: "object" }) as fc.Arbitrary<Record<string, unknown>>, fc.nat(9))
    .map(([args, dice]) => {
      if (dice < 8) delete args.session_id;
      return args;
    });
  const keys = Object.keys(schema.properties ?? {});
  return fc.oneof(
    { weight: 6, arbitrary: shaped },
    {
      weight: 2,
      arbitrary: fc
        .tuple(shaped, fc.constantFrom(...(keys.length ? keys : ["x"])), anyJson)
        .map(([args, key, value]) => ({ ...args, [key]: value })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(shaped, fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 }))
        .map(([a, b]) => ({ ...b, ...a })),
    },
    { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 4 }) },
  );
}

/** Keeps a fuzzed call from waiting longer than the run can afford (the box's limits still apply). */
function bounded(tool: string, args: Record<string, unknown>): Record<string, unknown> {
  const out = { ...args };
  if (tool === "bash" && typeof out.timeout_s === "number" && out.timeout_s > 3) out.timeout_s = 3;
  if (tool === "job_status" && typeof out.wait_s === "number" && out.wait_s > 1) out.wait_s = 1;
  // Each fork is a new box (seconds under gVisor): a valid n past 2 is 2; n out of range stays.
  if (tool === "session_fork" && typeof out.n === "number" && out.n > 2 && out.n <= 32) out.n = 2;
  if (tool === "aider_ai_code") {
    const options = out.aider_options;
    if (options && typeof options === "object" && !Array.isArray(options)) {
      out.aider_options = { ...options, timeout_s: 30 };
    }
  }
  return out;
}

const RUNS: Record<string, number> = {
  aider_ai_code: 3,
  session_create: 6,
  session_apply: 8,
  list_models: 4,
  code_search: 10,
};

describe("fuzzing every tool's arguments", () => {
  let repo: TempRepo;
  let drydock: InMemoryDrydock;
  let client: Client;

  beforeAll(async () => {
    repo = tempRepo({
      "README.md": "hello\n",
      "data.json": '{"a": 1, "b": [1, 2]}\n',
      "src/app.py": "def f():\n    return 1\n",
    });
    drydock = await inMemoryDrydock({
      repo: repo.path,
      sessionOptions: { commandTimeoutMs: 3_000 },
      ...(await serverExtensions({ llm: "offline" })),
    });
    client = drydock.client;
    ok(await client.callTool({ name: "bash", arguments: { command: "true" } }));
  });

  afterAll(async () => {
    await drydock?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
  });

  it(
    "answers every call with a well-formed result, and the server and the session stay up",
    { timeout: 600_000 },
    async () => {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(25);
      const tally: Record<string, { calls: number; errors: number; refusedBySchema: number; ms: number }> =
        {};
      const definitions = new Map(drydock.server.tools.map((t) => [t.name, t]));
      // Whether the server's own argument check refuses a call, asked of the check itself (not
      // read from the wording of the answer).
      const refusedByCheck = (name: string, args: unknown): boolean => {
        try {
          parseArgs(definitions.get(name)!.inputSchema, args, name);
          return false;
        } catch {
          return true;
        }
      };
      const started = Date.now();
      for (const tool of tools) {
        const counts = (tally[tool.name] = { calls: 0, errors: 0, refusedBySchema: 0, ms: 0 });
        const toolStarted = Date.now();
        await fc.assert(
          fc.asyncProperty(argumentsFor(tool.inputSchema as JsonSchema), async (generated) => {
            const args = bounded(tool.name, generated);
            const result = (await client.callTool({ name: tool.name, arguments: args }, undefined, {
              timeout: 120_000,
            })) as {
              content?: Array<{ type: string; text?: string }>;
              structuredContent?: unknown;
              isError?: boolean;
            };
            counts.calls++;
            const text = result.content?.[0]?.text;
            const refused = refusedByCheck(tool.name, args);
            if (refused) {
              counts.refusedBySchema++;
              // A call the check refuses never reaches the tool: it is an error answer.
              expect(result.isError, JSON.stringify(args).slice(0, 300)).toBe(true);
            }
            expect(typeof text, JSON.stringify(args).slice(0, 300)).toBe("string");
            // An error names what went wrong; it is never a stack trace.
            expect(text, JSON.stringify(args).slice(0, 300)).not.toMatch(/\n\s+at .+:\d+:\d+/);
            if (result.isError) {
              counts.errors++;
              expect(text!.length).toBeGreaterThan(0);
            } else if (tool.name === "aider_ai_code" || tool.name === "list_models") {
              // The aider server's contract: the text is the reply's JSON.
              expect(result.structuredContent).toEqual(JSON.parse(text!));
            }
          }),
          {
            numRuns: RUNS[tool.name] ?? 40,
            seed: Number(process.env.DRYDOCK_FUZZ_SEED ?? Date.now() % 2 ** 31),
          },
        );
        // After each tool's run, the server answers and the default session's shell works.
        const alive = ok(
          await client.callTool({ name: "bash", arguments: { command: "echo alive", restart: true } }),
        );
        expect(alive.stdout, `after fuzzing ${tool.name}`).toBe("alive\n");
        counts.ms = Date.now() - toolStarted;
      }
      const total = Object.values(tally).reduce((n, t) => n + t.calls, 0);
      console.log(
        `fuzz: ${total} calls over ${tools.length} tools in ${Date.now() - started} ms`,
        JSON.stringify(tally),
      );
      expect(total).toBeGreaterThan(600);
      // Most calls got past argument validation into the tools themselves.
      const refused = Object.values(tally).reduce((n, t) => n + t.refusedBySchema, 0);
      expect(refused).toBeLessThan(total / 2);
    },
  );
});
