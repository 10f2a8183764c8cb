/**
 * aider in a box on the cluster, through the session's gateway on this machine (the box reaches
 * it through drydock's relay over its exec stream: the Pod has no host path, and no network):
 * `drydock serve --engine kubernetes:… --llm offline`, under runc and under gVisor, fixes the
 * sample repository's greet().
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, inject, it } from "vitest";
import { testNamespace } from "../helpers/kube.js";
import { tempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const sample = join(process.cwd(), "examples", "sample-repo");
const FIX = "Make greet() return 'Hello, NAME!' so the tests pass";

describe.each(["runc", "runsc"])("aider on the cluster under %s", (runtime) => {
  it("edits the file through the gateway and the tests pass", async () => {
    await using ns = await testNamespace(`aider-${runtime}`);
    using repo = tempRepo(
      Object.fromEntries(readdirSync(sample).map((name) => [name, readFileSync(join(sample, name), "utf8")])),
    );
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name, v]) => v !== undefined && !/_API_KEY$|^DRYDOCK_(MODEL|LLM)/.test(name),
      ),
    ) as Record<string, string>;
    const client = new Client({ name: "aider-kube", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          cli,
          "serve",
          ...["--engine", ns.target, "--repo", repo.path, "--image", inject("sandboxImage")],
          ...["--runtime", runtime, "--llm", "offline", "--tools", "all", "--pool", "0"],
        ],
        env,
        stderr: "ignore",
      }),
    );
    try {
      const reply = (await client.callTool(
        {
          name: "aider_ai_code",
          arguments: { ai_coding_prompt: FIX, relative_editable_files: ["greet.py"] },
        },
        undefined,
        { timeout: 240_000 },
      )) as { content: Array<{ text: string }>; isError?: boolean };
      expect(reply.isError, reply.content[0]?.text).toBeFalsy();
      const parsed = JSON.parse(reply.content[0]!.text) as { success: boolean; diff: string };
      expect(parsed.success, parsed.diff).toBe(true);
      expect(parsed.diff).toContain('+    return f"Hello, {name}!"');
      const tests = (await client.callTool(
        { name: "bash", arguments: { command: "python3 -m pytest -q 2>&1 | tail -1" } },
        undefined,
        { timeout: 240_000 },
      )) as unknown as { structuredContent: { stdout: string } };
      expect(tests.structuredContent.stdout).toMatch(/passed/);
      const pods = await ns.pods();
      expect(pods).toHaveLength(1);
      expect(pods[0]!.spec?.runtimeClassName).toBe(runtime === "runsc" ? "gvisor" : undefined);
      // Nothing of this machine is mounted: every volume is the Pod's own memory.
      const volumes = pods[0]!.spec?.volumes ?? [];
      expect(volumes.length).toBeGreaterThan(0);
      expect(volumes.filter((v) => !v.emptyDir || v.hostPath || v.csi)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
