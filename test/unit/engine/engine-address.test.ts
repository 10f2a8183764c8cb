import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseEngineAddress } from "../../../src/engine/engine-address.js";

describe("parseEngineAddress", () => {
  const tls = mkdtempSync(join(tmpdir(), "engine-tls-"));
  for (const f of ["ca.pem", "cert.pem", "key.pem"]) writeFileSync(join(tls, f), `${f}\n`);
  afterAll(() => rmSync(tls, { recursive: true, force: true }));

  it("takes a unix socket", () => {
    expect(parseEngineAddress("unix:///var/run/docker.sock")).toEqual({
      name: "unix:///var/run/docker.sock",
      options: { socketPath: "/var/run/docker.sock" },
    });
  });

  it("takes tcp with the TLS folder of --engine-tls-dir, or one of its own in ?tls=", () => {
    const a = parseEngineAddress("tcp://10.0.0.2:2376", tls);
    expect(a.name).toBe("tcp://10.0.0.2:2376");
    expect(a.options).toMatchObject({ protocol: "https", host: "10.0.0.2", port: 2376 });
    expect(a.options.ca?.toString()).toBe("ca.pem\n");
    expect(a.options.key?.toString()).toBe("key.pem\n");
    const b = parseEngineAddress(`tcp://box.example:2376?tls=${tls}`);
    expect(b.name).toBe("tcp://box.example:2376");
    expect(b.options.cert?.toString()).toBe("cert.pem\n");
    expect(parseEngineAddress("tcp://127.0.0.1:2375").options).toEqual({
      protocol: "http",
      host: "127.0.0.1",
      port: 2375,
    });
  });

  it("refuses ssh, a TLS folder without the files, and what is no address, naming the flag", () => {
    expect(() => parseEngineAddress("ssh://me@far")).toThrow(
      /^--engine: ssh:\/\/me@far: ssh:\/\/ engines are not supported; forward/,
    );
    expect(() => parseEngineAddress("tcp://h:2376", "/nonexistent")).toThrow(
      /^--engine-tls-dir: tcp:\/\/h:2376: cannot read \/nonexistent\/ca.pem \(ENOENT\)/,
    );
    expect(() => parseEngineAddress("docker.example.com")).toThrow(
      /^--engine: "docker.example.com" is not an engine address/,
    );
    expect(() => parseEngineAddress("tcp://h:99999")).toThrow(/port 99999 is out of range/);
  });
});
