import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, inject, it } from "vitest";
import { tempRepo } from "../helpers/repos.js";

async function serve(repo: string, state: string): Promise<Client> {
  const client = new Client({ name: "tasks-test", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [
        join(process.cwd(), "dist/cli/main.js"),
        "serve",
        "--repo",
        repo,
        "--image",
        inject("sandboxImage"),
        "--tools",
        "all",
      ],
      env: { ...process.env, DRYDOCK_STATE_DIR: state } as Record<string, string>,
      stderr: "ignore",
    }),
  );
  return client;
}

const text = (r: unknown) => (r as { content: Array<{ text: string }> }).content[0]!.text;

describe("the task stack through the real server", () => {
  it("survives a server restart, and a damaged file falls back to the last good state", async () => {
    using repo = tempRepo();
    const state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    try {
      let client = await serve(repo.path, state);
      await client.callTool({
        name: "create_new_task",
        arguments: { title: "Ship the release", body: "notes" },
      });
      await client.callTool({
        name: "extend_current_task",
        arguments: { title: "Write changelog", body: "" },
      });
      await client.close();

      client = await serve(repo.path, state);
      expect(text(await client.callTool({ name: "get_big_picture", arguments: {} }))).toMatch(
        /Ship the release[\s\S]*Write changelog \(current\) <-- YOU ARE HERE/,
      );
      await client.callTool({ name: "update_current_task", arguments: { body: "second save" } });
      await client.close();

      // A write cut short (as by kill -9 in the middle of a save) leaves a damaged file.
      const dir = join(state, "tasks");
      const file = readdirSync(dir).find((f) => f.endsWith(".json"))!;
      writeFileSync(join(dir, file), '{"version":1,"sha256":"00","state":{"trunc');
      client = await serve(repo.path, state);
      const current = text(await client.callTool({ name: "get_current_task", arguments: {} }));
      expect(current).toMatch(/Write changelog/);
      await client.close();
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
