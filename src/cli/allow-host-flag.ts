/**
 * `serve --allow-host HOST:PORT`: another Host header the HTTP server accepts besides its bound
 * address, such as the name of a Kubernetes Service in front of it
 * (`drydock.drydock.svc:8765`). The Host check stops DNS rebinding, so a name is taken only
 * whole, with its port: no pattern, no bare host.
 */
import { InvalidArgumentError } from "../util/errors.js";

export const ALLOW_HOST_HELP =
  "another Host header the HTTP server accepts, as HOST:PORT (a Service's name in front of it, e.g. drydock.drydock.svc:8765) (repeatable)";

/** Commander's collector: checks one value and adds it, lower-cased, to the list. */
export function collectAllowHost(value: string, previous: string[] = []): string[] {
  const match =
    /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*):(\d{1,5})$/.exec(
      value,
    );
  const port = match ? Number(match[2]) : 0;
  if (!match || port < 1 || port > 65535) {
    throw new InvalidArgumentError(
      "--allow-host",
      `${JSON.stringify(value)} is not HOST:PORT; write the name clients put in the Host header, with the port they use (e.g. drydock.drydock.svc:8765)`,
    );
  }
  return [...previous, value.toLowerCase()];
}
