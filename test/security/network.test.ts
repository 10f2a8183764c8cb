/**
 * Network from inside a default box: the only way out is the session's LLM gateway, through the
 * bind-mounted socket. IPv6, DNS, a bridge network's gateway, the cloud metadata address, every
 * address of the host, and drydock's own MCP port on the host's loopback and on the bridge must
 * all fail. The bridge is a network this test makes itself: an engine need not have docker0.
 * (IPv4 to a public address and the metadata address on port 80 are also in
 * test/integration/hardening.test.ts.)
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverExtensions } from "../../src/server/extensions.js";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

/** A bridge network of the test's own, and its gateway: the host as containers on it see it. */
function createBridge(name: string): string {
  execFileSync("docker", ["network", "create", "--label", "drydock.test=network", name], { stdio: "ignore" });
  const gateway = execFileSync(
    "docker",
    ["network", "inspect", name, "--format", "{{range .IPAM.Config}}{{.Gateway}}{{end}}"],
    { encoding: "utf8" },
  ).trim();
  expect(gateway, `docker network ${name} has no IPv4 gateway`).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  return gateway;
}

function hostAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && !a.address.startsWith("fe80"))
    .map((a) => a!.address);
}

describe("network from a default box", () => {
  let repo: TempRepo;
  let drydock: InMemoryDrydock;
  const http: HttpHandle[] = [];
  let sessionId: string;
  const bridge = `drydock-test-${randomBytes(4).toString("hex")}`;
  let bridgeGateway: string;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    drydock = await inMemoryDrydock({ repo: repo.path, ...(await serverExtensions({ llm: "offline" })) });
    bridgeGateway = createBridge(bridge);
    // drydock's own MCP endpoint, listening on the host's loopback and on the bridge's gateway
    // (the host as bridged containers see it; local to this machine, unlike its other addresses).
    for (const host of ["127.0.0.1", bridgeGateway]) {
      http.push(await serveHttp(drydock.server, { host, port: 0, token: "network-test-token" }));
    }
    sessionId = ok(await drydock.client.callTool({ name: "session_create", arguments: {} }))
      .session_id as string;
    // An aider call starts the session's gateway and the relay to it in the box.
    ok(
      await drydock.client.callTool(
        {
          name: "aider_ai_code",
          arguments: {
            ai_coding_prompt: "no rule matches",
            relative_editable_files: ["README.md"],
            session_id: sessionId,
            model: "openai/drydock-offline",
          },
        },
        undefined,
        { timeout: 170_000 },
      ),
    );
  });

  afterAll(async () => {
    await Promise.all(http.map((h) => h.close()));
    await drydock?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
    execFileSync("docker", ["network", "rm", bridge], { stdio: "ignore" });
  });

  it("reaches the gateway and nothing else: IPv6, DNS, bridge gateway, metadata, the host's MCP port", async () => {
    const port = http[1]!.port;
    const tcp: Array<[string, string, number]> = [
      ["gateway through the relay", "127.0.0.1", 47_011],
      ["MCP port (host loopback) on the box's loopback", "127.0.0.1", http[0]!.port],
      ["MCP port (host loopback) on the box's IPv6 loopback", "::1", http[0]!.port],
      ["MCP port on a bridge network's gateway", bridgeGateway, port],
      ...hostAddresses().map((a): [string, string, number] => [`MCP port on host address ${a}`, a, port]),
      ["cloud metadata over http", "169.254.169.254", 80],
      ["cloud metadata, IPv6 (AWS)", "fd00:ec2::254", 80],
      ["public IPv6", "2606:4700:4700::1111", 443],
      ["IPv4 DNS over TCP", "8.8.8.8", 53],
    ];
    const probe = `python3 - <<'EOF'
import json, socket
results = {}
for name, host, port in ${JSON.stringify(tcp)}:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect((host, port)); results[name] = "connected"
    except OSError as error:
        results[name] = type(error).__name__ + ": " + str(error.strerror or error)
    finally:
        s.close()
for name, host in [["DNS over UDP", "8.8.8.8"], ["DNS over UDP, IPv6", "2001:4860:4860::8888"]]:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_DGRAM)
    try:
        s.sendto(b"\\0" * 12, (host, 53)); results[name] = "sent"
    except OSError as error:
        results[name] = type(error).__name__
for name in ["example.com", "metadata.google.internal", "host.docker.internal", "localhost6"]:
    try:
        results["resolve " + name] = socket.getaddrinfo(name, 80)[0][4][0]
    except OSError as error:
        results["resolve " + name] = type(error).__name__
print(json.dumps(results))
EOF`;
    const result = JSON.parse(
      ok(
        await drydock.client.callTool({ name: "bash", arguments: { command: probe, session_id: sessionId } }),
      ).stdout as string,
    ) as Record<string, string>;
    expect(result["gateway through the relay"]).toBe("connected");
    for (const [name, value] of Object.entries(result)) {
      if (name === "gateway through the relay") continue;
      expect(value, name).not.toMatch(/^connected|^sent|^\d/);
    }
    expect(Object.keys(result).length).toBe(tcp.length + 6);
    // The gateway answers a real request, and the box has no interface but loopback.
    const models = ok(
      await drydock.client.callTool({
        name: "bash",
        arguments: {
          command:
            "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:47011/offline/v1/models', timeout=10).status)\"; " +
            "awk 'NR > 2 {print $1}' /proc/net/dev; cat /proc/net/if_inet6 | awk '{print $6}'; wc -l < /proc/net/route",
          session_id: sessionId,
        },
      }),
    );
    expect(models.stdout).toBe("200\nlo:\nlo\n1\n");
  });

  it("the same probe does connect from a box the operator put on the bridge (the check can fail)", async () => {
    // Under runc in both test projects: runsc boxes cannot join a Docker network.
    await using bridged = await testSession(repo.path, { network: bridge, runtime: "runc" });
    const connect = await bridged.bash(
      `python3 -c "import socket; s=socket.create_connection(('${bridgeGateway}', ${http[1]!.port}), 3); print('connected')" 2>&1`,
    );
    expect(connect.output).toBe("connected\n");
  });
});
