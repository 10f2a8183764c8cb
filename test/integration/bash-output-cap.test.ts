/**
 * The bash tool's max_output_bytes: a call keeps as much of each stream as it asks for, up to the
 * limit the operator set (drydock serve --max-output-bytes); past it the call is refused, naming
 * the field, the limit and the way round it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failure, inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

describe("bash max_output_bytes", () => {
  let repo: TempRepo;
  let drydock: InMemoryDrydock;
  const bash = (args: Record<string, unknown>) => drydock.client.callTool({ name: "bash", arguments: args });

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    drydock = await inMemoryDrydock({ repo: repo.path, sessionOptions: { maxOutputBytesLimit: 1_000_000 } });
  });
  afterAll(async () => {
    await drydock?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
  });

  it("keeps the session's 30,000 bytes unless the call asks for more, of each stream and of both merged", async () => {
    const command = "head -c 600000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero | tr '\\0' b >&2";
    const capped = ok(await bash({ command }));
    expect(capped.truncated).toBe(true);
    expect((capped.stdout as string).length).toBeLessThan(31_000);
    expect(capped.stdout).toMatch(/bytes of output cut .*larger max_output_bytes/);

    const whole = ok(await bash({ command, max_output_bytes: 1_000_000 }));
    expect(whole).toMatchObject({ exit_code: 0, truncated: false });
    expect(whole.stdout).toBe("a".repeat(600_000));
    expect(whole.stderr).toBe("b".repeat(300_000));

    // A call asking for less than the default gets less: the head and the tail of it.
    const small = ok(await bash({ command: "seq 1 100000", max_output_bytes: 2_000 }));
    expect(small.truncated).toBe(true);
    expect((small.stdout as string).length).toBeLessThan(3_000);
    expect(small.stdout).toMatch(/^1\n2\n/);
    expect(small.stdout).toMatch(/100000\n$/);
  });

  it("refuses more than the server's limit, and less than 1,000 bytes, naming the field", async () => {
    const over = failure(await bash({ command: "echo no", max_output_bytes: 2_000_000 }));
    expect(over).toMatch(/max_output_bytes: 2000000 is over this server's limit of 1000000 bytes/);
    expect(over).toMatch(/drydock serve --max-output-bytes/);
    expect(failure(await bash({ command: "echo no", max_output_bytes: 10 }))).toMatch(/max_output_bytes/);
    // The refused calls ran nothing; the shell answers as before.
    expect(ok(await bash({ command: "echo yes" })).stdout).toBe("yes\n");
  });
});
