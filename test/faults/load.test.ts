/**
 * Load: ten clients, each with its own session, four tool calls in flight per session, a fixed
 * number of calls. Every call must be answered, and nothing one session prints or writes may show
 * up in another's answers.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failure, inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { boxRuntime } from "../helpers/runtime.js";

const SESSIONS = 10;
const WORKERS = 4;
// Under gVisor each call costs several times more (ptrace): one round there still has 40 calls in
// flight at once, which is what mixes output if anything does.
const ROUNDS = boxRuntime() === "runsc" ? 1 : 3;
/** Files of the diff burst: enough that four diffs of them overlap in the box. */
const BURST_FILES = boxRuntime() === "runsc" ? 1000 : 3000;

describe("load", () => {
  let repo: TempRepo;
  let drydock: InMemoryDrydock;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "shared\n" });
    drydock = await inMemoryDrydock({ repo: repo.path });
  });

  afterAll(async () => {
    await drydock?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
  });

  it(`answers ${SESSIONS} sessions x ${WORKERS} concurrent calls, ${SESSIONS * WORKERS * ROUNDS * 4} calls, with no output mixed`, async () => {
    const clients: Client[] = [];
    for (let s = 0; s < SESSIONS; s++) clients.push(await drydock.connect(`load-${s}`));
    let answered = 0;
    const worker = async (client: Client, s: number, w: number): Promise<void> => {
      for (let round = 0; round < ROUNDS; round++) {
        const token = `s${s}-w${w}-r${round}`;
        const echoed = ok(await client.callTool({ name: "bash", arguments: { command: `echo ${token}` } }));
        expect(echoed.stdout).toBe(`${token}\n`);
        ok(
          await client.callTool({
            name: "file_editor",
            arguments: { operation: "create", path: `load/${token}.txt`, content: `${token}\n` },
          }),
        );
        const viewed = ok(
          await client.callTool({
            name: "file_editor",
            arguments: { operation: "view", path: `load/${token}.txt` },
          }),
        );
        expect(viewed.output).toBe(`     1\t${token}`);
        const diff = ok(await client.callTool({ name: "session_diff", arguments: {} })).diff as string;
        expect(diff).toContain(`+${token}`);
        const foreign = [...diff.matchAll(/^\+(s\d+)-w/gm)].map((m) => m[1]);
        expect(new Set(foreign)).toEqual(new Set([`s${s}`]));
        answered += 4;
      }
    };
    const started = Date.now();
    await Promise.all(
      clients.flatMap((client, s) => Array.from({ length: WORKERS }, (_, w) => worker(client, s, w))),
    );
    console.log(`${answered} calls over ${SESSIONS} sessions in ${Date.now() - started} ms`);
    expect(answered).toBe(SESSIONS * WORKERS * ROUNDS * 4);
    // Every session ends with exactly its own files, and each client sees only its own session.
    for (const [s, client] of clients.entries()) {
      const listed = ok(await client.callTool({ name: "session_list", arguments: {} })).sessions as unknown[];
      expect(listed).toHaveLength(1);
      const files = ok(await client.callTool({ name: "bash", arguments: { command: "ls load | sort" } }));
      const expected = Array.from({ length: WORKERS }, (_, w) =>
        Array.from({ length: ROUNDS }, (_, r) => `s${s}-w${w}-r${r}.txt`),
      )
        .flat()
        .sort();
      expect((files.stdout as string).trim().split("\n")).toEqual(expected);
    }
  });

  it("answers concurrent diff calls on one session, which share the box's private index", async () => {
    const client = await drydock.connect("diff-burst");
    ok(
      await client.callTool({
        name: "bash",
        arguments: { command: `mkdir many && for i in $(seq ${BURST_FILES}); do echo $i > many/$i; done` },
      }),
    );
    for (let round = 0; round < 3; round++) {
      const replies = await Promise.all([
        ...Array.from({ length: 4 }, () => client.callTool({ name: "session_diff", arguments: {} })),
        client.callTool({ name: "task_done", arguments: { summary: "burst" } }),
      ]);
      const errors = replies.filter((r) => r.isError).map((r) => failure(r));
      expect(errors).toEqual([]);
      const diffs = new Set(replies.slice(0, 4).map((r) => ok(r).diff));
      expect(diffs.size).toBe(1);
    }
  });
});
