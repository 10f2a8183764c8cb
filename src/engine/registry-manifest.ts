/**
 * Asks a registry, over its HTTP API (the OCI distribution spec), which digest an image reference
 * names: a HEAD of `/v2/<path>/manifests/<tag or digest>`. A Kubernetes cluster has no image API,
 * so this is how drydock knows an image is there to pull and pins a tag to the bytes it names
 * (docs/kubernetes.md, Images). Credentials are the client configuration's (registry-auth.ts):
 * Basic, or a Bearer token fetched from the realm the registry's challenge names.
 *
 * Hand-written (about a hundred lines on fetch) because the npm packages for the registry API
 * are unmaintained or pull a whole container toolkit; this needs two requests of the spec.
 */
import { DrydockError } from "../util/errors.js";
import { parseImageReference } from "./image-reference.js";
import { registryAuth, type RegistryAuth } from "./registry-auth.js";

/** What the HEAD accepts: an index (several platforms) or a single manifest, OCI or Docker's. */
const ACCEPT = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.v2+json",
].join(", ");

const TIMEOUT_MS = 10_000;

/** Whether a reference names its registry host (`127.0.0.1:5000/x`, `ghcr.io/a/b`), not only a path. */
export function namesRegistry(ref: string): boolean {
  const first = ref.split("/")[0] ?? "";
  return ref.includes("/") && (/[.:]/.test(first) || first === "localhost");
}

/**
 * The registry's scheme: plain HTTP on loopback only (as the Docker Engine allows 127.0.0.0/8
 * without TLS), HTTPS everywhere else.
 */
export function registryBase(registry: string): string {
  const host = registry.replace(/:\d+$/, "");
  const loopback = host === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(host) || host === "[::1]";
  return `${loopback ? "http" : "https"}://${registry}`;
}

/** The parameters of a `WWW-Authenticate: Bearer realm="…",service="…",scope="…"` challenge. */
export function bearerChallenge(header: string): Record<string, string> | undefined {
  const match = /^\s*Bearer\s+(.*)$/i.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  for (const [, key, value] of match[1]!.matchAll(/([A-Za-z]+)="([^"]*)"/g))
    params[key!.toLowerCase()] = value!;
  return params.realm ? params : undefined;
}

function basic(auth: RegistryAuth | undefined): string | undefined {
  if (!auth?.username || auth.password === undefined) return undefined;
  return `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`;
}

async function bearerToken(
  challenge: Record<string, string>,
  auth: RegistryAuth | undefined,
): Promise<string> {
  const url = new URL(challenge.realm!);
  // Credentials go to a token service over TLS only (plain HTTP on loopback, as for registries).
  if (
    url.protocol !== "https:" &&
    !(url.protocol === "http:" && registryBase(url.host).startsWith("http:"))
  ) {
    throw new Error(
      `the token service ${url.origin} is not reached over TLS; drydock sends it no credentials`,
    );
  }
  if (challenge.service) url.searchParams.set("service", challenge.service);
  if (challenge.scope) url.searchParams.set("scope", challenge.scope);
  const credentials = basic(auth);
  const answer = await fetch(url, {
    headers: credentials ? { authorization: credentials } : {},
    redirect: "manual",
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (!answer.ok) throw new Error(`the token service ${url.origin} answered ${answer.status}`);
  const body = (await answer.json()) as { token?: string; access_token?: string };
  const token = body.token ?? body.access_token;
  if (!token) throw new Error(`the token service ${url.origin} gave no token`);
  return `Bearer ${token}`;
}

/**
 * The digest (`sha256:…`) of the manifest a reference names, or undefined when the registry has
 * no such manifest (404). Fails, saying why, when the registry cannot be asked (unreachable,
 * credentials refused).
 */
export async function manifestDigest(ref: string, auth?: RegistryAuth | null): Promise<string | undefined> {
  const image = parseImageReference(ref);
  if (!image || !namesRegistry(ref)) {
    throw new DrydockError("image_reference", `${ref} names no registry host to ask`);
  }
  const credentials = auth === null ? undefined : (auth ?? (await registryAuth(image.registry)));
  const url = `${registryBase(image.registry)}/v2/${image.path}/manifests/${image.digest ?? image.tag ?? "latest"}`;
  const head = (authorization?: string) =>
    fetch(url, {
      method: "HEAD",
      headers: { accept: ACCEPT, ...(authorization ? { authorization } : {}) },
      // A registry answers a manifest itself: a redirect is not followed, so no credential and no
      // request of drydock's goes where the reference did not name.
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  let answer: Response;
  try {
    answer = await head(basic(credentials));
    if (answer.status === 401) {
      const challenge = bearerChallenge(answer.headers.get("www-authenticate") ?? "");
      if (challenge) answer = await head(await bearerToken(challenge, credentials));
    }
  } catch (error) {
    throw new DrydockError(
      "registry_unreachable",
      `could not ask ${image.registry} for ${ref}: ${(error as Error).message} (check the address, and that this host trusts its certificate)`,
    );
  }
  if (answer.status === 404) return undefined;
  if (answer.status >= 300 && answer.status < 400) {
    throw new DrydockError(
      "registry_error",
      `${image.registry} answered ${ref} with a redirect (${answer.status}), which drydock does not follow: name the registry that serves the manifest`,
    );
  }
  if (answer.status === 401 || answer.status === 403) {
    throw new DrydockError(
      "registry_denied",
      `${image.registry} refused to show ${ref} (${answer.status}): log in (docker login ${image.registry}) or set DOCKER_CONFIG to a client configuration with its credentials`,
    );
  }
  if (!answer.ok) {
    throw new DrydockError("registry_error", `${image.registry} answered ${answer.status} for ${ref}`);
  }
  const digest = answer.headers.get("docker-content-digest") ?? undefined;
  if (!digest || !/^sha256:[a-f0-9]{64}$/.test(digest)) {
    throw new DrydockError("registry_error", `${image.registry} gave no digest for ${ref}`);
  }
  if (image.digest && digest !== image.digest) {
    throw new DrydockError(
      "registry_error",
      `${image.registry} answered ${ref} with another digest (${digest})`,
    );
  }
  return digest;
}

/** The reference by digest for a reference by tag (or itself when it names a digest already). */
export function byDigest(ref: string, digest: string): string {
  const at = ref.indexOf("@");
  const name = at >= 0 ? ref.slice(0, at) : ref;
  const colon = name.lastIndexOf(":");
  const repo = colon > name.lastIndexOf("/") ? name.slice(0, colon) : name;
  return `${repo}@${digest}`;
}
