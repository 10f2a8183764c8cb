/**
 * The egress allowlist: which hosts a box may reach over HTTPS. Entries are exact host names,
 * `*.domain` patterns (any name under the domain, not the domain itself), IP literals (matched only
 * when listed as such) or named sets (`pypi`, `npm`, …). Only port 443 is ever allowed. Pure.
 */
import { isIP } from "node:net";
import { InvalidArgumentError } from "../util/errors.js";
import { EGRESS_SETS, EGRESS_SET_NAMES } from "./egress-sets.js";

/** The only port a box may reach. */
export const EGRESS_PORT = 443;

export interface EgressTarget {
  host: string;
  port: number;
}

export type EgressDecision = { allowed: true } | { allowed: false; why: string };

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * A host as drydock compares it: lower case, without a trailing dot, IP literals in their one
 * canonical form (IPv6 without brackets; numeric forms such as `2130706433` or `0x7f.1` become
 * the dotted IPv4 address they stand for). Undefined when the text is neither a host name nor an
 * IP literal (internationalised names must be given in their xn-- form).
 */
export function canonicalHost(text: string): string | undefined {
  let host = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (isIP(host) === 6) {
    try {
      return new URL(`https://[${host}]/`).hostname.slice(1, -1);
    } catch {
      return undefined;
    }
  }
  if (!/^[A-Za-z0-9._-]+$/.test(host)) return undefined;
  if (host.endsWith(".")) host = host.slice(0, -1);
  let parsed: string;
  try {
    parsed = new URL(`https://${host}/`).hostname;
  } catch {
    return undefined;
  }
  if (isIP(parsed) === 4) return parsed;
  if (parsed.length === 0 || parsed.length > 253) return undefined;
  return parsed.split(".").every((label) => LABEL.test(label)) ? parsed : undefined;
}

/**
 * Parses allowlist entries (each a host, `host:443`, a `*.domain` pattern, an IP literal or a set
 * name) into canonical rules, sets expanded and duplicates dropped. Throws `InvalidArgumentError`
 * naming `field` (a flag such as `--egress`, or a tool's parameter) and the entry.
 */
export function parseEgressEntries(entries: readonly string[], field: string): string[] {
  const rules = new Set<string>();
  for (const entry of entries) for (const rule of parseEntry(entry, field)) rules.add(rule);
  return [...rules];
}

/** Parses a flag's values, each a comma-separated list (`--egress pypi,npm --egress example.com`). */
export function parseEgressFlag(values: string | readonly string[], flag = "--egress"): string[] {
  const list = typeof values === "string" ? [values] : values;
  return parseEgressEntries(
    list.flatMap((value) => value.split(",")),
    flag,
  );
}

function parseEntry(raw: string, field: string): readonly string[] {
  const entry = raw.trim();
  const example = field.startsWith("--")
    ? `${field} pypi,files.example.com`
    : '["pypi", "files.example.com"]';
  const refuse = (problem: string) => new InvalidArgumentError(field, `${problem}; e.g. ${example}`);
  const quoted = JSON.stringify(entry);
  if (!entry) throw refuse("an empty entry (give hosts or named sets separated by commas)");
  const set = EGRESS_SETS[entry.toLowerCase()];
  if (set) return set;
  if (entry.includes("/")) {
    throw refuse(`${quoted} looks like a URL; give the host name alone (HTTPS on port 443 is implied)`);
  }
  let host = entry;
  let port: string | undefined;
  const bracketed = /^(\[[^\]]*\])(?::(\d+))?$/.exec(entry);
  if (bracketed) {
    host = bracketed[1]!;
    port = bracketed[2];
  } else if (entry.split(":").length === 2) {
    [host, port] = entry.split(":") as [string, string];
  }
  if (port !== undefined && Number(port) !== EGRESS_PORT) {
    throw refuse(`${quoted} names port ${port}, but only port ${EGRESS_PORT} (HTTPS) can be allowed`);
  }
  if (host.startsWith("*.")) {
    const domain = canonicalHost(host.slice(2));
    if (domain === undefined || isIP(domain)) {
      throw refuse(`${quoted} is not a pattern: after "*." comes a domain name`);
    }
    if (!domain.includes(".")) {
      throw refuse(
        `${quoted} is too broad: a pattern names a domain of at least two labels, such as *.example.com`,
      );
    }
    return [`*.${domain}`];
  }
  if (host.includes("*")) throw refuse(`${quoted} is not a pattern: a pattern is "*." followed by a domain`);
  const canonical = canonicalHost(host);
  if (canonical === undefined) {
    throw refuse(
      `${quoted} is not a host name, an IP address, a *.domain pattern or a named set (${EGRESS_SET_NAMES.join(", ")})`,
    );
  }
  return [canonical];
}

/** Parses a CONNECT request's target (`host:port`, `[v6]:port`); undefined when it is neither. */
export function parseConnectTarget(authority: string): EgressTarget | undefined {
  const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(authority) ?? /^([^:[\]]+):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const host = canonicalHost(match[1]!);
  const port = Number(match[2]);
  if (host === undefined || port < 1 || port > 65_535) return undefined;
  return { host, port };
}

/** A target as people write it: `host:port`, `[v6]:port`. */
export function targetText(target: EgressTarget): string {
  return `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`;
}

/** Whether a canonical host is allowed by the rules (port aside). */
function hostAllowed(rules: readonly string[], host: string): boolean {
  if (isIP(host)) return rules.includes(host);
  return rules.some((rule) => rule === host || (rule.startsWith("*.") && host.endsWith(rule.slice(1))));
}

/** Whether a box may connect to `target` (its host canonical, see `canonicalHost`), and if not why. */
export function egressDecision(rules: readonly string[], target: EgressTarget): EgressDecision {
  if (target.port !== EGRESS_PORT) {
    return {
      allowed: false,
      why: `only HTTPS on port ${EGRESS_PORT} leaves the box, not port ${target.port}`,
    };
  }
  if (hostAllowed(rules, target.host)) return { allowed: true };
  if (rules.length === 0) return { allowed: false, why: "this session's egress allowlist is empty" };
  return {
    allowed: false,
    why: isIP(target.host)
      ? `an IP address is reachable only when listed itself, and ${target.host} is not in this session's egress allowlist`
      : `${target.host} is not in this session's egress allowlist`,
  };
}

/** The requested rules that the granted ones do not cover (a request may narrow, never widen). */
export function egressBeyondGrant(granted: readonly string[], requested: readonly string[]): string[] {
  return requested.filter((rule) => {
    if (!rule.startsWith("*.")) return !hostAllowed(granted, rule);
    const domain = rule.slice(2);
    return !granted.some((g) => g.startsWith("*.") && (domain === g.slice(2) || domain.endsWith(g.slice(1))));
  });
}
