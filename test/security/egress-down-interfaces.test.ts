/**
 * The host's own addresses include those of interfaces that are not running: one up with no
 * carrier (docker0 while no container runs) and one set down. With the operator's
 * `--egress-allow-private 172.16.0.0/12`, the egress dial still refuses them as the host's, while
 * another address of that range is opened. Node's own interface list leaves both out. The
 * interfaces (a veth pair and a bridge) are made in a network namespace of the test's own, removed
 * after: nothing of the machine's network changes.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const probe = join(process.cwd(), "test", "fixtures", "egress", "host-addresses-probe.mjs");
/** On an interface that is up with no carrier, as docker0 is while no container runs. */
const NO_CARRIER = "172.30.254.1";
/** On a bridge set down. */
const DOWN = "172.31.254.1";
/** In the opened range and on no interface: the dial tries it. */
const ELSEWHERE = "172.29.0.9";

interface Probe {
  all: string[];
  running: string[];
  dials: Record<string, string>;
}

describe("the host's own addresses, on interfaces that are not up", () => {
  const ns = `drydock-test-${randomBytes(4).toString("hex")}`;
  const ip = (...args: string[]) => execFileSync("ip", ["-n", ns, ...args], { stdio: "pipe" });
  let seen: Probe;

  beforeAll(() => {
    if (process.getuid?.() !== 0) {
      throw new Error(
        "this test makes a network namespace and interfaces in it: run the tests as root (CI does)",
      );
    }
    execFileSync("ip", ["netns", "add", ns]);
    ip("link", "set", "lo", "up");
    // Up with no carrier (its peer is down), as docker0 is while no container runs.
    ip("link", "add", "dd-nocarrier", "type", "veth", "peer", "name", "dd-peer");
    ip("address", "add", `${NO_CARRIER}/24`, "dev", "dd-nocarrier");
    ip("link", "set", "dd-nocarrier", "up");
    ip("link", "add", "dd-down", "type", "bridge");
    ip("address", "add", `${DOWN}/24`, "dev", "dd-down");
    seen = JSON.parse(
      execFileSync("ip", ["netns", "exec", ns, process.execPath, probe, NO_CARRIER, DOWN, ELSEWHERE], {
        encoding: "utf8",
      }),
    ) as Probe;
  });

  afterAll(() => {
    execFileSync("ip", ["netns", "del", ns], { stdio: "ignore" });
  });

  it("counts both as the host's, though Node's list leaves them out", () => {
    const flags = (name: string) =>
      (
        JSON.parse(
          execFileSync("ip", ["-n", ns, "-json", "link", "show", "dev", name], { encoding: "utf8" }),
        ) as {
          flags: string[];
        }[]
      )[0]!.flags;
    expect(flags("dd-nocarrier")).toEqual(expect.arrayContaining(["UP", "NO-CARRIER"]));
    expect(flags("dd-down")).not.toContain("UP");
    expect(seen.running).not.toContain(NO_CARRIER);
    expect(seen.running).not.toContain(DOWN);
    expect(seen.all).toEqual(expect.arrayContaining([NO_CARRIER, DOWN, "127.0.0.1"]));
  });

  it("refuses them as the host's inside an opened private range, and opens the rest of the range", () => {
    for (const address of [NO_CARRIER, DOWN]) {
      expect(seen.dials[address]).toBe(
        `${address} is an address of this host (open it with --egress-allow-private ${address}); a box may not reach it`,
      );
    }
    expect(seen.dials[ELSEWHERE]).toMatch(/^could not connect to 172\.29\.0\.9:443 from the host/);
  });
});
