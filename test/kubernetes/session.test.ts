/**
 * The session suite on a real cluster: a drydock server whose boxes are Pods (KubernetesEngine),
 * reached by an MCP client. Each test has a namespace of its own, deleted afterwards.
 */
import { describe, expect, it } from "vitest";
import { failure, inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { testNamespace } from "../helpers/kube.js";
import { git, tempRepo } from "../helpers/repos.js";

const text = (reply: unknown): string => (reply as { content: Array<{ text: string }> }).content[0]!.text;

describe("a session on the cluster", () => {
  it("runs bash, the file editor, diff and apply in a Pod on one of the cluster's nodes", async () => {
    await using ns = await testNamespace("session");
    using repo = tempRepo({ "a.txt": "one\n", "src/m.py": "def f():\n    return 1\n" });
    await using drydock = await inMemoryDrydock({
      engine: await ns.engine(),
      repo: repo.path,
      pool: { size: 0 },
    });
    const created = ok(
      await drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, {
        timeout: 240_000,
      }),
    );
    const call = (name: string, args: Record<string, unknown> = {}) =>
      drydock.client.callTool({ name, arguments: { session_id: created.session_id, ...args } }, undefined, {
        timeout: 240_000,
      });
    const pods = await ns.pods();
    expect(pods).toHaveLength(1);
    const pod = pods[0]!;
    expect(pod.metadata?.name).toBe(`drydock-${String(created.session_id)}`);
    const nodes = (await ns.core.listNode()).items.map((n) => n.metadata?.name);
    expect(nodes).toContain(pod.spec?.nodeName);

    // The shell keeps its state between calls; exit codes and stderr come back.
    ok(await call("bash", { command: "cd src && export MARK=kept" }));
    const where = ok(await call("bash", { command: 'pwd; echo "$MARK"; id -u; echo oops >&2; exit 3' }));
    expect(where.stdout).toBe("/workspace/src\nkept\n1000\n");
    expect(where.stderr).toBe("oops\n");
    expect(where.exit_code).toBe(3);

    // File editor: view, replace, create.
    expect(text(await call("file_editor", { operation: "view", path: "src/m.py" }))).toContain("return 1");
    ok(
      await call("file_editor", {
        operation: "replace",
        path: "src/m.py",
        old_string: "return 1",
        new_string: "return 2",
      }),
    );
    ok(await call("file_editor", { operation: "create", path: "new.txt", content: "fresh\n" }));
    ok(await call("bash", { command: "cd /workspace && git rm -q a.txt" }));

    const diff = ok(await call("session_diff"));
    expect(String(diff.diff)).toContain("+    return 2");
    expect(String(diff.diff)).toContain("+fresh");
    expect(String(diff.diff)).toContain("deleted file mode");

    const applied = ok(await call("session_apply", { branch: "drydock/cluster" }));
    expect(applied.branch).toBe("drydock/cluster");
    expect(git(repo.path, "show", "drydock/cluster:src/m.py")).toContain("return 2");
    expect(git(repo.path, "show", "drydock/cluster:new.txt")).toBe("fresh\n");

    // The box's first process (the command, under the pod's pause process) holds no stream the
    // node logs: 4 MB written to them through /proc are kept nowhere.
    const quiet = ok(
      await call("bash", {
        command:
          'p=$(ps -eo pid=,args= | awk \'$2 == "sleep" && $3 == "infinity" { print $1; exit }\'); ' +
          "readlink /proc/$p/fd/1; for fd in 1 2; do head -c 4000000 /dev/zero | tr '\\0' x > /proc/$p/fd/$fd; echo \"fd $fd: $?\"; done",
      }),
    );
    expect(quiet.stdout).toBe("/dev/null\nfd 1: 0\nfd 2: 0\n");
    const logged = await ns.core.readNamespacedPodLog({
      name: pod.metadata!.name!,
      namespace: ns.name,
      container: "box",
    });
    expect(String(logged ?? "").length).toBe(0);

    ok(await call("session_destroy", { session_id: created.session_id }));
    await expect.poll(async () => (await ns.pods()).length, { timeout: 60_000 }).toBe(0);
  });

  it("stops a command at its time limit; a Pod deleted mid-command or idle gives clear errors, and a new session works", async () => {
    await using ns = await testNamespace("stops");
    using repo = tempRepo({ "README.md": "hello\n" });
    await using drydock = await inMemoryDrydock({
      engine: await ns.engine(),
      repo: repo.path,
      pool: { size: 0 },
    });
    const client = drydock.client;
    const tool = (name: string, args: Record<string, unknown> = {}) =>
      client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 });
    const GONE =
      /box drydock-[0-9a-f]{12} is no longer running: it was stopped or removed outside drydock.*session_destroy.*session_create/;
    const deletePod = (id: string) =>
      ns.core.deleteNamespacedPod({ name: `drydock-${id}`, namespace: ns.name, gracePeriodSeconds: 0 });

    for (const how of ["mid-command", "idle"]) {
      const id = ok(await tool("session_create")).session_id as string;
      const call = (name: string, args: Record<string, unknown> = {}) =>
        tool(name, { ...args, session_id: id });
      if (how === "mid-command") {
        const started = Date.now();
        const slow = await call("bash", { command: "sleep 60; echo never", timeout: 2 });
        expect(Date.now() - started).toBeLessThan(30_000);
        expect(text(slow)).not.toContain("never");
        expect(ok(await call("bash", { command: "echo after" })).stdout).toBe("after\n");
        const inFlight = call("bash", { command: "echo started; sleep 60" });
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await deletePod(id);
        expect(failure(await inFlight)).toMatch(GONE);
      } else {
        // The API deletes the Pod at once and its node kills the box moments later (Docker's
        // `rm -f` returns once it is dead): the shell may answer until then.
        await deletePod(id);
        await expect
          .poll(
            async () => ((await call("bash", { command: "echo again" })) as { isError?: boolean }).isError,
            {
              timeout: 30_000,
            },
          )
          .toBe(true);
      }
      expect(failure(await call("bash", { command: "echo again" }))).toMatch(GONE);
      expect(failure(await call("session_diff"))).toMatch(GONE);
      expect(failure(await call("file_editor", { operation: "view", path: "README.md" }))).toMatch(GONE);
      ok(await call("session_destroy"));
    }
    await expect.poll(async () => (await ns.pods()).length, { timeout: 60_000 }).toBe(0);
    expect(ok(await tool("bash", { command: "cat README.md" })).stdout).toBe("hello\n");
  });
});
