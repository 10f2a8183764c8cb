import { describe, expect, it } from "vitest";
import { pushTarget } from "../../../src/engine/image-push.js";
import { PullProgress } from "../../../src/engine/pull-progress.js";
import {
  bearerChallenge,
  byDigest,
  namesRegistry,
  registryBase,
} from "../../../src/engine/registry-manifest.js";

const DIGEST = `sha256:${"c".repeat(64)}`;

describe("a registry reference", () => {
  it("names a registry only with a host first: a dot, a port or localhost", () => {
    expect(namesRegistry("127.0.0.1:5000/drydock-sandbox:1")).toBe(true);
    expect(namesRegistry("ghcr.io/acme/box")).toBe(true);
    expect(namesRegistry("localhost/box")).toBe(true);
    expect(namesRegistry("drydock-sandbox:9efb80f03e19")).toBe(false);
    expect(namesRegistry("acme/box:1")).toBe(false);
  });

  it("is asked over plain HTTP on loopback only", () => {
    expect(registryBase("127.0.0.1:5000")).toBe("http://127.0.0.1:5000");
    expect(registryBase("localhost:5000")).toBe("http://localhost:5000");
    expect(registryBase("127.9.9.9")).toBe("http://127.9.9.9");
    expect(registryBase("ghcr.io")).toBe("https://ghcr.io");
    expect(registryBase("127.0.0.1.example.com:5000")).toBe("https://127.0.0.1.example.com:5000");
    expect(registryBase("10.0.0.5:5000")).toBe("https://10.0.0.5:5000");
  });

  it("by digest drops the tag and keeps the registry's port", () => {
    expect(byDigest("127.0.0.1:5000/drydock-sandbox:9efb", DIGEST)).toBe(
      `127.0.0.1:5000/drydock-sandbox@${DIGEST}`,
    );
    expect(byDigest("127.0.0.1:5000/drydock-sandbox", DIGEST)).toBe(
      `127.0.0.1:5000/drydock-sandbox@${DIGEST}`,
    );
    expect(byDigest(`ghcr.io/a/b:1@${DIGEST}`, DIGEST)).toBe(`ghcr.io/a/b@${DIGEST}`);
  });

  it("reads a Bearer challenge's realm, service and scope; nothing from Basic or a realm-less one", () => {
    expect(
      bearerChallenge(
        'Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull"',
      ),
    ).toEqual({
      realm: "https://auth.example.com/token",
      service: "registry.example.com",
      scope: "repository:a/b:pull",
    });
    expect(bearerChallenge('Basic realm="registry"')).toBeUndefined();
    expect(bearerChallenge('Bearer service="x"')).toBeUndefined();
  });
});

describe("a push target", () => {
  it("keeps the source's tag unless it names one", () => {
    expect(pushTarget("127.0.0.1:5000/drydock-sandbox", "9efb80f03e19")).toEqual({
      repo: "127.0.0.1:5000/drydock-sandbox",
      tag: "9efb80f03e19",
    });
    expect(pushTarget("registry.example.com/team/box:v1", "9efb")).toEqual({
      repo: "registry.example.com/team/box",
      tag: "v1",
    });
    expect(pushTarget("localhost:5000/box", undefined)).toEqual({
      repo: "localhost:5000/box",
      tag: "latest",
    });
  });

  it("must name a registry host and no digest", () => {
    expect(() => pushTarget("drydock-sandbox", "1")).toThrow(
      /target: drydock-sandbox names no registry host/,
    );
    expect(() => pushTarget("acme/box:1", "1")).toThrow(/names no registry host/);
    expect(() => pushTarget(`127.0.0.1:5000/box@${DIGEST}`, "1")).toThrow(/names a digest/);
    expect(() => pushTarget("127.0.0.1:5000/Box", "1")).toThrow(/is not an image name/);
  });
});

describe("push progress", () => {
  it("tells each layer's upload at each quarter, and skips Preparing and Waiting", () => {
    const progress = new PullProgress("127.0.0.1:5000/box:1", "pushing");
    const lines = [
      { status: "The push refers to repository [127.0.0.1:5000/box]" },
      { status: "Preparing", id: "abc" },
      { status: "Waiting", id: "abc" },
      ...[1, 2, 60].map((mb) => ({
        status: "Pushing",
        id: "abc",
        progressDetail: { current: mb * 1024 * 1024, total: 100 * 1024 * 1024 },
      })),
      { status: "Pushed", id: "abc" },
    ]
      .map((e) => progress.line(e))
      .filter((l) => l !== undefined);
    expect(lines).toEqual([
      "pushing 127.0.0.1:5000/box:1: The push refers to repository [127.0.0.1:5000/box]",
      "pushing 127.0.0.1:5000/box:1: layer abc: Pushing 1.0 / 100.0 MB",
      "pushing 127.0.0.1:5000/box:1: layer abc: Pushing 60.0 / 100.0 MB",
      "pushing 127.0.0.1:5000/box:1: layer abc: Pushed",
    ]);
  });
});

describe("asking a registry", () => {
  it("follows no redirect: the credentials and the request stay with the registry named", async () => {
    const { createServer } = await import("node:http");
    const { manifestDigest } = await import("../../../src/engine/registry-manifest.js");
    let elsewhere = 0;
    const other = createServer((_req, res) => {
      elsewhere++;
      res.writeHead(200, { "docker-content-digest": DIGEST }).end();
    });
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
    const otherPort = (other.address() as { port: number }).port;
    const seen: Array<string | undefined> = [];
    const registry = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(307, { location: `http://127.0.0.1:${otherPort}${req.url}` }).end();
    });
    await new Promise<void>((r) => registry.listen(0, "127.0.0.1", r));
    const port = (registry.address() as { port: number }).port;
    try {
      await expect(
        manifestDigest(`127.0.0.1:${port}/team/box:1`, {
          serveraddress: `127.0.0.1:${port}`,
          username: "u",
          password: "p",
        }),
      ).rejects.toThrow(/answered .* with a redirect \(307\), which drydock does not follow/);
      expect(seen).toEqual([`Basic ${Buffer.from("u:p").toString("base64")}`]);
      expect(elsewhere).toBe(0);
    } finally {
      registry.close();
      other.close();
    }
  });
});
