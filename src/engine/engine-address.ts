/**
 * Where a Docker Engine is, as `--engine` gives it, turned into dockerode's connection options.
 * Pure except for reading the TLS files. Forms: `unix:///path/docker.sock`, `tcp://host:port`
 * (plain; with a TLS folder, verified TLS as DOCKER_CERT_PATH: ca.pem, cert.pem, key.pem), and
 * `tcp://host:port?tls=DIR` for a folder of its own.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { InvalidArgumentError } from "../util/errors.js";

export interface EngineAddress {
  /** How messages and results name the engine: the URL without its query. */
  name: string;
  options: {
    socketPath?: string;
    protocol?: "http" | "https";
    host?: string;
    port?: number;
    ca?: Buffer;
    cert?: Buffer;
    key?: Buffer;
  };
}

const TLS_FILES = ["ca.pem", "cert.pem", "key.pem"] as const;

/** Parses an engine URL; `tlsDir` applies to `tcp://` addresses without a `?tls=` of their own. */
export function parseEngineAddress(url: string, tlsDir?: string, field = "--engine"): EngineAddress {
  const unix = /^unix:\/\/(\/.+)$/.exec(url);
  if (unix) return { name: url, options: { socketPath: unix[1]! } };
  if (/^ssh:\/\//.test(url)) {
    throw new InvalidArgumentError(
      field,
      `${url}: ssh:// engines are not supported; forward the engine's socket and give that instead, e.g. ` +
        "`ssh -nNT -L /tmp/far.sock:/var/run/docker.sock user@host &` then --engine unix:///tmp/far.sock",
    );
  }
  const tcp = /^tcp:\/\/([^/:?]+|\[[0-9a-fA-F:]+\]):(\d{1,5})\/?(?:\?tls=(.+))?$/.exec(url);
  if (!tcp) {
    throw new InvalidArgumentError(
      field,
      `${JSON.stringify(url)} is not an engine address; write unix:///var/run/docker.sock, tcp://HOST:PORT (with --engine-tls-dir DIR) or tcp://HOST:PORT?tls=DIR`,
    );
  }
  const port = Number(tcp[2]);
  if (port < 1 || port > 65_535)
    throw new InvalidArgumentError(field, `${url}: port ${port} is out of range`);
  const name = url.replace(/\?.*$/, "");
  const host = tcp[1]!.replace(/^\[|\]$/g, "");
  const dir = tcp[3] ? decodeURIComponent(tcp[3]) : tlsDir;
  if (!dir) return { name, options: { protocol: "http", host, port } };
  const files: Partial<Record<(typeof TLS_FILES)[number], Buffer>> = {};
  for (const file of TLS_FILES) {
    try {
      files[file] = readFileSync(join(resolve(dir), file));
    } catch (error) {
      throw new InvalidArgumentError(
        tcp[3] ? field : "--engine-tls-dir",
        `${url}: cannot read ${join(resolve(dir), file)} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); the folder must hold ca.pem, cert.pem and key.pem as DOCKER_CERT_PATH does`,
      );
    }
  }
  return {
    name,
    options: {
      protocol: "https",
      host,
      port,
      ca: files["ca.pem"],
      cert: files["cert.pem"],
      key: files["key.pem"],
    },
  };
}
