/**
 * drydock's relay in a real box (src/sandbox/stream-relay.ts, box-agent/drydock_box/relay.py),
 * attacked as the agent in the box would: a flood of connections past its bound, garbage on them,
 * writes into the relay's own output, and a look for any host path it was told. The relay here
 * leads to the session's egress proxy, which refuses example.com without contacting it: every
 * request stays on this machine.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EGRESS_RELAY_PORT } from "../../src/sandbox/egress-env.js";
import { DEFAULT_MAX_CONNECTIONS } from "../../src/sandbox/relay-host.js";
import { egressSessionForSuite } from "../helpers/egress-session.js";

const flood = readFileSync(join(process.cwd(), "test", "fixtures", "relay", "flood.py"));

describe("the relay in a box, attacked from inside", () => {
  const box = egressSessionForSuite("relay\n");

  /** A request through the relay to the proxy: a refused CONNECT answers 403. */
  const probe = async () =>
    (
      await box.session.bash(
        `curl -sS -o /dev/null -w '%{http_code}\\n' --max-time 20 -x http://127.0.0.1:${EGRESS_RELAY_PORT} https://example.com/ 2>&1; true`,
        { timeoutMs: 60_000 },
      )
    ).output;

  const runFlood = async (count: number, what: "connect" | "garbage") => {
    const result = await box.session.box.exec(
      ["python3", "-", String(EGRESS_RELAY_PORT), String(count), what],
      {
        stdin: flood,
        timeoutMs: 120_000,
      },
    );
    expect(result.exitCode, result.stderr.toString()).toBe(0);
    return JSON.parse(result.stdout.toString()) as { answered: number; closed: number; silent: number };
  };

  it("answers through the proxy before anything else is tried", async () => {
    expect(await probe()).toMatch(/403/);
  });

  it("holds no more connections than its bound, closes the rest at once, and serves after", async () => {
    const count = DEFAULT_MAX_CONNECTIONS + 64;
    const got = await runFlood(count, "connect");
    expect(got.silent).toBe(0);
    expect(got.answered).toBeLessThanOrEqual(DEFAULT_MAX_CONNECTIONS);
    expect(got.answered).toBeGreaterThan(0);
    expect(got.closed).toBeGreaterThanOrEqual(count - DEFAULT_MAX_CONNECTIONS);
    expect(await probe()).toMatch(/403/);
  });

  it("carries garbage to the proxy, which refuses it, and serves after", async () => {
    const got = await runFlood(32, "garbage");
    expect(got.silent).toBe(0);
    expect(await probe()).toMatch(/403/);
  });

  it("is told no host path: its arguments are the port alone, and no socket is in the box", async () => {
    const look = await box.session.bash(
      "for p in $(pgrep -u 1000 python3); do tr '\\0' ' ' < /proc/$p/cmdline; echo; done | grep '^drydock-box-relay'; " +
        "find / -type s 2>/dev/null | grep -v '^/proc/'; echo end",
    );
    expect(look.output).toMatch(
      new RegExp(`^drydock-box-relay -I -S -c .* relay ${EGRESS_RELAY_PORT} \\nend\\n$`, "s"),
    );
    expect(look.output).not.toContain(box.session.gatewayDir);
  });

  it("cannot be made to reach anything else by writing into its output: it stops, and drydock starts it again", async () => {
    // Not dumpable: under runc another process of the box user cannot open the relay's streams.
    // Where one can (gVisor), a forged frame stops the relay (logged) and nothing is connected.
    const write = await box.session.bash(
      "for p in $(pgrep -u 1000 python3); do grep -q relay /proc/$p/cmdline 2>/dev/null || continue; " +
        "{ printf 'Z\\0\\0\\0\\1\\0\\0\\0\\0/var/run/docker.sock' > /proc/$p/fd/1; } 2>/dev/null && echo wrote || echo refused; done",
    );
    expect(write.output).toMatch(/^(wrote|refused)\n$/);
    if (write.output.startsWith("wrote")) {
      await expect
        .poll(() => box.logs.some((r) => /egress relay: the box sent a frame of kind 0x5a/.test(r.message)))
        .toBe(true);
    }
    await expect.poll(probe, { timeout: 20_000, interval: 500 }).toMatch(/403/);
  });

  it("is started again when the agent kills it", async () => {
    const killed = await box.session.bash(
      "pkill -f drydock-box-relay; sleep 0.2; pgrep -f drydock-box-relay | wc -l",
    );
    expect(killed.output.trim()).toBe("0");
    await expect
      .poll(() => box.logs.some((r) => /egress relay ended .*starting it again/.test(r.message)), {
        timeout: 20_000,
      })
      .toBe(true);
    await expect.poll(probe, { timeout: 20_000, interval: 500 }).toMatch(/403/);
  });
});
