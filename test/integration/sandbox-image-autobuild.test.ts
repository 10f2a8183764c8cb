/**
 * A fresh machine needs no `drydock image build` of its own: `drydock serve` builds the sandbox
 * image when the engine lacks it. The test runs a copy of the built package whose sandbox
 * Dockerfile differs by one comment, so its image tag is one this engine has never had (the image
 * itself comes from the build cache, identical to the real one), and serves from it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

let copy: string;
let state: string;
let repo: TempRepo;
let builtTag: string | undefined;

beforeAll(() => {
  const root = process.cwd();
  copy = mkdtempSync(join(tmpdir(), "drydock-package-"));
  state = mkdtempSync(join(tmpdir(), "drydock-state-"));
  repo = tempRepo();
  // What the package reads at run time besides dist/: the box agent, the scripts and pages under src/.
  for (const part of ["dist", "images", "package.json", "box-agent", "src"]) {
    cpSync(join(root, part), join(copy, part), { recursive: true });
  }
  symlinkSync(join(root, "node_modules"), join(copy, "node_modules"));
  const dockerfile = readFileSync(join(root, "Dockerfile.sandbox"), "utf8");
  writeFileSync(join(copy, "Dockerfile.sandbox"), `${dockerfile}\n# variant ${copy}\n`);
});

afterAll(() => {
  // Only this test's own tag: the image under it is the one every other test uses.
  if (builtTag) spawnSync("docker", ["image", "rm", builtTag], { stdio: "ignore" });
  repo?.[Symbol.dispose]();
  rmSync(copy, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
});

describe("a missing sandbox image", () => {
  it("is built by drydock serve before it answers, with progress on stderr", async () => {
    const env = { ...process.env, DRYDOCK_STATE_DIR: state } as Record<string, string>;
    delete env.DRYDOCK_IMAGE;
    let stderr = "";
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(copy, "dist/cli/main.js"), "serve", "--repo", repo.path, "--pool", "0"],
      env,
      stderr: "pipe",
    });
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: "autobuild", version: "1" });
    await client.connect(transport, { timeout: 600_000 });
    try {
      expect(stderr).toMatch(/the sandbox image is not built yet: building it now/);
      builtTag = /built (drydock-sandbox:[0-9a-f]{12})/.exec(stderr)?.[1];
      expect(builtTag, stderr).toBeDefined();
      const reply = await client.callTool({ name: "bash", arguments: { command: "echo ready" } });
      expect((reply.structuredContent as { stdout: string }).stdout).toBe("ready\n");
      const inspected = execFileSync("docker", ["image", "inspect", "--format", "{{.Id}}", builtTag!], {
        encoding: "utf8",
      });
      expect(inspected).toMatch(/^sha256:/);
    } finally {
      await client.close();
    }
  }, 900_000);
});
