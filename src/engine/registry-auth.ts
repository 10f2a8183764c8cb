/**
 * Credentials for a registry, from the engine's own client configuration as `docker pull` reads
 * it: `$DOCKER_CONFIG/config.json` (default `~/.docker/config.json`), its `credHelpers` and
 * `credsStore` (a `docker-credential-<name>` program on the host) and its `auths`. They are handed
 * to the engine for one pull and go nowhere else: never into a box, an image, a label or a log.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { DOCKER_HUB } from "./image-reference.js";

/** What the engine's API takes as X-Registry-Auth. */
export interface RegistryAuth {
  serveraddress: string;
  username?: string;
  password?: string;
  identitytoken?: string;
}

interface DockerConfig {
  auths?: Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string }>;
  credsStore?: string;
  credHelpers?: Record<string, string>;
}

/** The folder of the client configuration: DOCKER_CONFIG, else ~/.docker. */
export function dockerConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.DOCKER_CONFIG || join(homedir(), ".docker");
}

/** The keys `docker login` may have stored a registry under. */
function configKeys(registry: string): string[] {
  if (registry === DOCKER_HUB) return ["https://index.docker.io/v1/", "index.docker.io", "docker.io"];
  return [
    registry,
    `https://${registry}`,
    `http://${registry}`,
    `https://${registry}/v1/`,
    `https://${registry}/v2/`,
  ];
}

/** The credentials `auths` holds for a registry, if any. Pure. */
export function authFromConfig(config: DockerConfig, registry: string): RegistryAuth | undefined {
  for (const key of configKeys(registry)) {
    const entry = config.auths?.[key];
    if (!entry) continue;
    const serveraddress = registry === DOCKER_HUB ? "https://index.docker.io/v1/" : registry;
    if (entry.identitytoken) return { serveraddress, identitytoken: entry.identitytoken };
    if (entry.auth) {
      const text = Buffer.from(entry.auth, "base64").toString("utf8");
      const colon = text.indexOf(":");
      if (colon > 0)
        return { serveraddress, username: text.slice(0, colon), password: text.slice(colon + 1) };
    }
    if (entry.username && entry.password) {
      return { serveraddress, username: entry.username, password: entry.password };
    }
  }
  return undefined;
}

/** Asks a credential helper, as the docker client does; undefined when it knows nothing. */
function askHelper(helper: string, registry: string): Promise<RegistryAuth | undefined> {
  const server = registry === DOCKER_HUB ? "https://index.docker.io/v1/" : registry;
  return new Promise((resolve) => {
    const child = execFile(
      `docker-credential-${helper}`,
      ["get"],
      { timeout: 10_000, maxBuffer: 1 << 20 },
      (error, stdout) => {
        if (error) return resolve(undefined);
        try {
          const answer = JSON.parse(stdout) as { Username?: string; Secret?: string };
          if (!answer.Secret) return resolve(undefined);
          resolve(
            answer.Username === "<token>"
              ? { serveraddress: server, identitytoken: answer.Secret }
              : { serveraddress: server, username: answer.Username ?? "", password: answer.Secret },
          );
        } catch {
          resolve(undefined);
        }
      },
    );
    child.stdin?.end(server);
  });
}

/**
 * The credentials the client configuration gives for a registry, or undefined (an anonymous
 * pull). A missing or unreadable configuration is no credentials, as for `docker pull`.
 */
export async function registryAuth(
  registry: string,
  configDir = dockerConfigDir(),
): Promise<RegistryAuth | undefined> {
  let config: DockerConfig;
  try {
    config = JSON.parse(await readFile(join(configDir, "config.json"), "utf8")) as DockerConfig;
  } catch {
    return undefined;
  }
  const helper = config.credHelpers?.[registry] ?? config.credsStore;
  if (helper && /^[A-Za-z0-9_.-]+$/.test(helper)) {
    const fromHelper = await askHelper(helper, registry);
    if (fromHelper) return fromHelper;
  }
  return authFromConfig(config, registry);
}
