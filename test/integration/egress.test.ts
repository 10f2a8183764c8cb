/**
 * The egress allowlist for real: a box allowed `pypi` installs a package from PyPI through the
 * host's proxy (the only outside traffic these tests make), is refused any other host with a 403
 * that names the host and the flag, and the proxy never dials a refused host. A box without
 * egress has no proxy in its environment and reaches nothing.
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEgressFlag } from "../../src/gateway/egress-allowlist.js";
import { serverExtensions } from "../../src/server/extensions.js";
import { poolProfile } from "../../src/session/pool-fit.js";
import type { Session } from "../../src/session/session.js";
import { SessionManager } from "../../src/session/session-manager.js";
import { addLogSink, type LogRecord } from "../../src/util/log.js";
import { failure, inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { egressSessionForSuite } from "../helpers/egress-session.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine, testSession } from "../helpers/sessions.js";

describe("a box with --egress pypi", () => {
  const box = egressSessionForSuite("egress\n");

  const mine = () => box.logs.filter((r) => r.message.startsWith(`session ${box.session.id}: egress`));

  it("installs a package from PyPI with plain pip, and it imports", async () => {
    const result = await box.session.bash(
      // --ignore-installed: pip fetches six even where the image's system site has it (a custom
      // image; drydock's own no longer does).
      "pip install --no-cache-dir --progress-bar off --ignore-installed six==1.16.0 && python3 -c 'import six; print(six.__version__, six.__file__)'",
      { timeoutMs: 170_000 },
    );
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toMatch(
      /^1\.16\.0 \/home\/agent\/\.local\/lib\/python3\.\d+\/site-packages\/six\.py$/m,
    );
    const { egress } = box.session.info();
    expect(egress.allowlist).toEqual(["pypi.org", "files.pythonhosted.org"]);
    const pypi = egress.hosts.find((h) => h.host === "pypi.org");
    const files = egress.hosts.find((h) => h.host === "files.pythonhosted.org");
    expect(pypi).toMatchObject({ port: 443, refused: 0, failed: 0 });
    expect(pypi!.allowed).toBeGreaterThanOrEqual(1);
    expect(files!.allowed).toBeGreaterThanOrEqual(1);
    // The wheel itself came down through the tunnel.
    expect(files!.bytes_down).toBeGreaterThan(10_000);
    expect(pypi!.bytes_up).toBeGreaterThan(0);
    expect(mine().map((r) => r.message)).toContainEqual(
      expect.stringMatching(/egress allowed files\.pythonhosted\.org:443, \d+ bytes up, \d+ bytes down$/),
    );
  });

  it("refuses a host not listed with a 403 naming it and the flag, and never dials it", async () => {
    const curl = await box.session.bash("curl -sS -v https://example.com/ 2>&1; echo exit=$?", {
      timeoutMs: 60_000,
    });
    expect(curl.output).toContain(
      "< HTTP/1.1 403 drydock egress refused example.com:443 (allow it with drydock serve --egress example.com)",
    );
    expect(curl.output).toContain("CONNECT tunnel failed, response 403");
    expect(curl.output).toMatch(/exit=56$/m);
    const python = await box.session.bash(
      "python3 -c \"import urllib.request; urllib.request.urlopen('https://example.com/', timeout=30)\" 2>&1 | tail -1",
      { timeoutMs: 60_000 },
    );
    expect(python.output).toContain(
      "Tunnel connection failed: 403 drydock egress refused example.com:443 (allow it with drydock serve --egress example.com)",
    );
    const example = box.session.info().egress.hosts.find((h) => h.host === "example.com");
    // Refused both times; never allowed, and never a failed dial: the proxy did not try to connect.
    expect(example).toEqual({
      host: "example.com",
      port: 443,
      allowed: 0,
      refused: 2,
      failed: 0,
      bytes_up: 0,
      bytes_down: 0,
    });
    expect(mine()).toContainEqual(
      expect.objectContaining({
        level: "warning",
        message: `session ${box.session.id}: egress refused example.com:443: example.com is not in this session's egress allowlist`,
      }),
    );
  });

  it("refuses plain http and other ports to a listed host", async () => {
    const http = await box.session.bash("curl -sS http://pypi.org/simple/", { timeoutMs: 60_000 });
    expect(http.output).toContain("drydock refused a plain http request to pypi.org");
    const port = await box.session.bash("curl -sS -v https://pypi.org:8443/ 2>&1", { timeoutMs: 60_000 });
    expect(port.output).toContain(
      "< HTTP/1.1 403 drydock egress refused pypi.org:8443 (only port 443 is allowed)",
    );
    const counts = box.session.info().egress.hosts;
    expect(counts).toContainEqual(
      expect.objectContaining({ host: "pypi.org", port: 80, refused: 1, allowed: 0 }),
    );
    expect(counts).toContainEqual(
      expect.objectContaining({ host: "pypi.org", port: 8443, refused: 1, allowed: 0 }),
    );
  });

  it("runs what pip puts under the home directory (compiled parts of packages load)", async () => {
    const run = await box.session.bash(
      "mkdir -p ~/.local/bin && cp /bin/true ~/.local/bin/t && ~/.local/bin/t; echo exit=$?",
    );
    expect(run.output.trim()).toBe("exit=0");
  });

  it("reaches the proxy through drydock's relay: no host path, no socket, a CA bundle the agent cannot change", async () => {
    const info = await (await testEngine()).inspect(box.session.box.id);
    expect((info.Mounts ?? []).filter((m) => m.Type !== "tmpfs")).toEqual([]);
    expect(info.HostConfig.Binds ?? []).toEqual([]);
    const look = await box.session.bash(
      "find / -type s 2>/dev/null | grep -v '^/proc/'; stat -c '%U %a' /run/drydock /run/drydock/ca-certificates.crt; " +
        "{ echo forged > /run/drydock/ca-certificates.crt; } 2>/dev/null; echo write=$?; " +
        "grep -c 'BEGIN CERTIFICATE' /run/drydock/ca-certificates.crt; ps -eo args= | grep -c '^drydock-box-relay '",
    );
    expect(look.output).toMatch(/^root 755\nroot 644\nwrite=1\n[1-9]\d*\n1\n$/);
  });

  it("still has no network of its own: only the proxy leads out", async () => {
    const direct = await box.session.bash(
      "env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy curl -sS --max-time 10 https://pypi.org/simple/six/ 2>&1; echo exit=$?",
      { timeoutMs: 60_000 },
    );
    expect(direct.output).not.toMatch(/exit=0$/m);
    expect(box.session.info().limits.network).toBe("none");
  });
});

describe("a box without egress", () => {
  let repo: TempRepo;
  let session: Session;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "no egress\n" });
    session = await testSession(repo.path);
  });

  afterAll(async () => {
    await session?.destroy();
    repo?.[Symbol.dispose]();
  });

  it("has no proxy in its environment, no proxy socket, and reaches nothing", async () => {
    const env = await session.bash(
      "env | grep -i -E '^(https?|no)_proxy=|^PIP_USER=|^PIP_CERT=' ; echo done",
    );
    expect(env.output.trim()).toBe("done");
    expect(readdirSync(session.gatewayDir)).not.toContain("egress.sock");
    const run = await session.bash("cp /bin/true ~/t && ~/t; echo exit=$?");
    // stderr and stdout are two terminals: their order in `output` is not fixed.
    expect(run.output).toMatch(/\/home\/agent\/t: Permission denied/);
    expect(run.output).toMatch(/^exit=126$/m);
    const pip = await session.bash(
      "pip download --no-cache-dir --timeout 5 --retries 0 -d /tmp/x six==1.16.0 2>&1; echo exit=$?",
      { timeoutMs: 60_000 },
    );
    expect(pip.output).not.toMatch(/exit=0$/m);
    expect(pip.output).not.toContain("Saved /tmp/x/six");
    expect(session.info().egress).toEqual({
      allowlist: [],
      connections: { allowed: 0, refused: 0, failed: 0 },
      bytes_up: 0,
      bytes_down: 0,
      hosts: [],
    });
  });
});

describe("session_create's egress over MCP", () => {
  let repo: TempRepo;
  let granting: InMemoryDrydock;
  let plain: InMemoryDrydock;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "grants\n" });
    granting = await inMemoryDrydock({
      repo: repo.path,
      sessionOptions: { egress: parseEgressFlag("pypi") },
      ...(await serverExtensions({ llm: "offline" })),
    });
    plain = await inMemoryDrydock({ repo: repo.path });
  });

  afterAll(async () => {
    await granting?.[Symbol.asyncDispose]();
    await plain?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
  });

  const create = (drydock: InMemoryDrydock, args: Record<string, unknown>) =>
    drydock.client.callTool({ name: "session_create", arguments: args });

  it("gives a session the operator's allowlist by default, or the narrower one it asks for", async () => {
    const byDefault = ok(await create(granting, {}));
    expect((byDefault.egress as { allowlist: string[] }).allowlist).toEqual([
      "pypi.org",
      "files.pythonhosted.org",
    ]);
    const narrowed = ok(await create(granting, { egress: ["PyPI.org"] }));
    expect(narrowed.egress).toEqual({
      allowlist: ["pypi.org"],
      connections: { allowed: 0, refused: 0, failed: 0 },
      bytes_up: 0,
      bytes_down: 0,
      hosts: [],
    });
    const none = ok(await create(granting, { egress: [] }));
    expect((none.egress as { allowlist: string[] }).allowlist).toEqual([]);
    const listed = ok(await granting.client.callTool({ name: "session_list", arguments: {} }))
      .sessions as Array<{
      session_id: string;
      egress: { allowlist: string[] };
    }>;
    expect(listed.find((s) => s.session_id === narrowed.session_id)?.egress.allowlist).toEqual(["pypi.org"]);
    // The session that asked for none has no proxy in its box.
    const env = ok(
      await granting.client.callTool({
        name: "bash",
        arguments: { session_id: none.session_id, command: "echo proxy=${HTTPS_PROXY:-unset}" },
      }),
    );
    expect(env.stdout).toBe("proxy=unset\n");
  });

  it("lets aider reach the LLM gateway on the box's loopback past the proxy (NO_PROXY)", async () => {
    const created = ok(await create(granting, {}));
    const reply = ok(
      await granting.client.callTool(
        {
          name: "aider_ai_code",
          arguments: {
            ai_coding_prompt: "no rule matches",
            relative_editable_files: ["README.md"],
            session_id: created.session_id,
            model: "openai/drydock-offline",
          },
        },
        undefined,
        { timeout: 170_000 },
      ),
    );
    // The model answered (whether its edit fits this repository is beside the point).
    expect(reply.llm_requests, JSON.stringify(reply)).toBeGreaterThanOrEqual(1);
    expect(reply.message).toContain("drydock offline model");
    const listed = ok(await granting.client.callTool({ name: "session_list", arguments: {} }))
      .sessions as Array<{
      session_id: string;
      egress: { connections: unknown };
    }>;
    // Had aider's calls gone to the proxy, it would have refused 127.0.0.1:47011 and counted it.
    expect(listed.find((s) => s.session_id === created.session_id)?.egress.connections).toEqual({
      allowed: 0,
      refused: 0,
      failed: 0,
    });
  });

  it("refuses egress beyond the operator's flag, naming the field, the hosts and the flag", async () => {
    expect(failure(await create(granting, { egress: ["pypi", "example.com"] }))).toMatch(
      /^egress: example\.com is beyond the hosts this server lets boxes reach \(allowed: pypi\.org, files\.pythonhosted\.org\); .*drydock serve --egress HOST$/,
    );
    expect(failure(await create(granting, { egress: ["*.pythonhosted.org"] }))).toMatch(
      /^egress: \*\.pythonhosted\.org is beyond/,
    );
    expect(failure(await create(plain, { egress: ["pypi"] }))).toMatch(
      /^egress: pypi\.org, files\.pythonhosted\.org are beyond the hosts this server lets boxes reach \(allowed: none\).*drydock serve --egress HOST$/,
    );
    expect(failure(await create(granting, { egress: ["https://pypi.org/simple"] }))).toMatch(
      /^egress: "https:\/\/pypi\.org\/simple" looks like a URL/,
    );
  });
});

describe("--egress on the command line", () => {
  let repo: TempRepo;
  beforeAll(() => {
    repo = tempRepo({ "README.md": "flags\n" });
  });
  afterAll(() => repo?.[Symbol.dispose]());

  const drydock = (verb: "serve" | "run", ...args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [join(process.cwd(), "dist", "cli", "main.js"), verb, "--repo", repo.path, ...args],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => resolve({ code, stderr }));
    });

  it("refuses a bad allowlist, a network beside it and a missing CA bundle before anything starts", async () => {
    const bad = await drydock("serve", "--pool", "0", "--egress", "pypi,bad host");
    expect(bad.stderr).toMatch(/^drydock: --egress: "bad host" is not a host name/m);
    expect(bad.code).toBe(2);
    const network = await drydock("serve", "--pool", "0", "--egress", "pypi", "--network", "bridge");
    expect(network.stderr).toMatch(/^drydock: --egress: cannot be combined with --network bridge/m);
    expect(network.code).toBe(2);
    const ca = await drydock("serve", "--pool", "0", "--egress", "pypi", "--ca-cert", "/nonexistent/ca.pem");
    expect(ca.stderr).toMatch(/^drydock: --ca-cert: \/nonexistent\/ca\.pem is not a file/m);
    expect(ca.code).toBe(2);
    const run = await drydock("run", "--no-env", "--egress", "pypi.org:80", "--", "true");
    expect(run.stderr).toMatch(/^drydock: --egress: "pypi\.org:80" names port 80, but only port 443/m);
    expect(run.code).toBe(2);
  });
});

describe("egress on a box from the warm pool", () => {
  it("starts the session's proxy and relay on a pooled box made with the server's allowlist", async () => {
    const egress = parseEgressFlag("pypi");
    const manager = await SessionManager.start(await testEngine(), {
      pool: { size: 1, profile: poolProfile(sandboxImage(), { egress }) },
    });
    const repo = tempRepo({ "README.md": "warm\n" });
    const logs: LogRecord[] = [];
    const removeSink = addLogSink((record) => logs.push(record));
    try {
      await manager.pool!.full();
      const session = await manager.create({ repo: repo.path, image: sandboxImage(), egress });
      expect(logs.map((r) => r.message)).toContainEqual(
        expect.stringMatching(new RegExp(`^session ${session.id} ready .*, warm,`)),
      );
      const curl = await session.bash("curl -sS -v https://example.com/ 2>&1 | grep '^< HTTP'");
      expect(curl.output).toContain("< HTTP/1.1 403 drydock egress refused example.com:443");
      expect(session.info().egress).toMatchObject({ allowlist: egress, connections: { refused: 1 } });
    } finally {
      removeSink();
      await manager.closeAll();
      repo[Symbol.dispose]();
    }
  });
});
