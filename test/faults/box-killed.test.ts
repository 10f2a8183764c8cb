/**
 * A box stopped or removed from outside drydock (docker kill, docker rm -f, the OOM killer taking
 * its init): every tool on that session answers with a clear error that names the next step, the
 * task stack on the host is intact, the session can be destroyed, and a new one works.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import { failure, inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const GONE =
  /box [0-9a-f]{12} is no longer running: it was stopped or removed outside drydock.*session_destroy.*session_create/;

describe("a box killed from outside", () => {
  let repo: TempRepo;
  let drydock: InMemoryDrydock;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    drydock = await inMemoryDrydock({ repo: repo.path });
  });

  afterAll(async () => {
    await drydock?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
  });

  const boxesOf = async (id: string) => (await (await Engine.connect()).listBoxes(LABEL_SESSION, id)).length;

  for (const [how, argv] of [
    ["killed mid-command", (name: string) => ["kill", name]],
    ["removed while idle", (name: string) => ["rm", "-f", name]],
  ] as const) {
    it(`${how}: clear errors, the task stack survives, nothing is left, a new session works`, async () => {
      const client = drydock.client;
      const id = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
      ok(
        await client.callTool({
          name: "create_new_task",
          arguments: { title: "outlive the box", body: "", session_id: id },
        }),
      );
      const call = (name: string, args: Record<string, unknown> = {}) =>
        client.callTool({ name, arguments: { ...args, session_id: id } });
      if (how === "killed mid-command") {
        const inFlight = call("bash", { command: "echo started; sleep 60" });
        await new Promise((resolve) => setTimeout(resolve, 1000));
        execFileSync("docker", argv(`drydock-${id}`));
        expect(failure(await inFlight)).toMatch(GONE);
      } else {
        execFileSync("docker", argv(`drydock-${id}`));
      }
      expect(failure(await call("bash", { command: "echo again" }))).toMatch(GONE);
      expect(failure(await call("session_diff"))).toMatch(GONE);
      expect(failure(await call("file_editor", { operation: "view", path: "README.md" }))).toMatch(GONE);
      const task = ok(await call("get_current_task"));
      expect(task).toMatchObject({ zen: false, task: { title: "outlive the box" } });
      ok(await call("session_destroy"));
      expect(await boxesOf(id)).toBe(0);
      const fresh = ok(await client.callTool({ name: "bash", arguments: { command: "cat README.md" } }));
      expect(fresh.stdout).toBe("hello\n");
    });
  }
});
