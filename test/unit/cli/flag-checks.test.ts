import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  branchFlag,
  existingFile,
  llmFlag,
  offlineScriptFlag,
  portFlag,
  repoFlag,
} from "../../../src/cli/flag-checks.js";
import { keysFileFlag } from "../../../src/cli/keys-file-flag.js";
import { DEFAULT_SCRIPT_PATH } from "../../../src/gateway/offline-model.js";
import type { DrydockServer } from "../../../src/server/drydock-server.js";
import { serveHttp } from "../../../src/server/http.js";
import { FlagError } from "../../../src/util/errors.js";
import { git, tempRepo, type TempRepo } from "../../helpers/repos.js";

async function refusal(check: () => Promise<unknown>): Promise<string> {
  const error = await check().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FlagError);
  return (error as Error).message;
}

let dir: string;
let repo: TempRepo;
let busy: Server;
let busyPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "drydock-flags-"));
  repo = tempRepo();
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
  busyPort = (busy.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolve) => busy.close(resolve));
  repo[Symbol.dispose]();
  rmSync(dir, { recursive: true, force: true });
});

describe("flags that name files", () => {
  it("needs an existing file", async () => {
    const file = join(dir, "keys.env");
    writeFileSync(file, "OPENAI_API_KEY=sk-test\n");
    expect(await existingFile(file, "--keys-file", "a .env file")).toBe(file);
    expect(await refusal(() => existingFile(join(dir, "nope"), "--keys-file", "a .env file"))).toBe(
      `--keys-file: ${join(dir, "nope")} does not exist; give the path of a .env file`,
    );
    expect(await refusal(() => existingFile(dir, "--keys-file", "a .env file"))).toMatch(/is not a file/);
  });

  it("takes --keys-file, and --env-file as its older name, but not two different files", async () => {
    const file = join(dir, "a.env");
    writeFileSync(file, "X=1\n");
    expect(await keysFileFlag(file, undefined)).toBe(file);
    expect(await keysFileFlag(undefined, file)).toBe(file);
    expect(await keysFileFlag(undefined, undefined)).toBeUndefined();
    expect(await refusal(() => keysFileFlag(undefined, join(dir, "missing.env")))).toMatch(/^--env-file: /);
    expect(await refusal(() => keysFileFlag(file, join(dir, "other.env")))).toMatch(
      /^--keys-file: and --env-file name different files/,
    );
  });

  it("needs an offline script that parses", async () => {
    expect(await offlineScriptFlag(DEFAULT_SCRIPT_PATH, "--offline-script")).toBe(DEFAULT_SCRIPT_PATH);
    expect(await offlineScriptFlag(undefined, "--offline-script")).toBeUndefined();
    const broken = join(dir, "broken.json");
    writeFileSync(broken, "{ not json");
    expect(await refusal(() => offlineScriptFlag(broken, "--offline-script"))).toMatch(/^--offline-script: /);
    expect(await refusal(() => offlineScriptFlag(join(dir, "none.json"), "--offline-script"))).toMatch(
      /^--offline-script: .* does not exist/,
    );
  });

  it("needs a replay file that exists and a record file whose directory exists", async () => {
    await llmFlag("offline");
    await llmFlag(`record:${join(dir, "new.jsonl")}`);
    expect(await refusal(() => llmFlag("sometimes"))).toMatch(/^--llm: /);
    expect(await refusal(() => llmFlag(`replay:${join(dir, "none.jsonl")}`))).toMatch(
      /^--llm: .* does not exist/,
    );
    expect(await refusal(() => llmFlag(`record:${join(dir, "no-dir", "x.jsonl")}`))).toMatch(
      /^--llm: .* is not a directory/,
    );
  });

  it("needs a git repository", async () => {
    expect((await repoFlag(repo.path, "--repo")).head).toMatch(/^[0-9a-f]{40}$/);
    expect(await refusal(() => repoFlag(dir, "--allow-repo"))).toMatch(
      /^--allow-repo: .* is not inside a git repository/,
    );
  });

  it("needs a new, valid branch name", async () => {
    git(repo.path, "branch", "taken");
    await branchFlag(repo.path, "drydock/new");
    expect(await refusal(() => branchFlag(repo.path, "a..b"))).toMatch(
      /^--branch: "a\.\.b" is not a valid branch name/,
    );
    expect(await refusal(() => branchFlag(repo.path, "-x"))).toMatch(/is not a valid branch name/);
    expect(await refusal(() => branchFlag(repo.path, "taken"))).toMatch(/^--branch: taken already exists/);
  });
});

describe("--port and --host", () => {
  it("accepts a free port and refuses one in use, an address not on this machine", async () => {
    await portFlag("127.0.0.1", 0);
    expect(await refusal(() => portFlag("127.0.0.1", busyPort))).toBe(
      `--port: ${busyPort} is already in use on 127.0.0.1 (another program, or another drydock serve); choose another port, or --port 0 for any free one`,
    );
    expect(await refusal(() => portFlag("192.0.2.1", 0))).toMatch(
      /^--host: 192\.0\.2\.1 is not an address of this machine/,
    );
  });

  it("a port taken between the check and the listen is still a clear error", async () => {
    const listening = serveHttp({} as DrydockServer, { host: "127.0.0.1", port: busyPort, token: "t" });
    await expect(listening).rejects.toThrow(
      `port ${busyPort} on 127.0.0.1 is already in use; choose another with --port, or --port 0 for any free one`,
    );
  });
});
