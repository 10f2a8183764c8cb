/**
 * Validates objects against the Kubernetes API's JSON Schemas for Pod and NetworkPolicy, as
 * vendored in test/fixtures/kubernetes (see the README there for their source and licence).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";

export const KUBERNETES_VERSIONS = ["1.30", "1.37"] as const;
export type KubernetesVersion = (typeof KUBERNETES_VERSIONS)[number];

const INT32 = 2 ** 31;
const compiled = new Map<string, (value: unknown) => string[]>();

function extensionKeywords(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) extensionKeywords(item, found);
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith("x-kubernetes-")) found.add(key);
      extensionKeywords(value, found);
    }
  }
  return found;
}

function load(version: KubernetesVersion): Ajv2020 {
  const path = fileURLToPath(
    new URL(`../fixtures/kubernetes/kubernetes-${version}.schema.json`, import.meta.url),
  );
  const schema = JSON.parse(readFileSync(path, "utf8")) as { $id: string };
  // Strict about the schema itself (an unknown keyword is an error), not about nullable type unions.
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  // Kubernetes' own annotations on the schema (list and map kinds, unions): no constraint here.
  for (const keyword of extensionKeywords(schema)) ajv.addKeyword(keyword);
  ajv.addFormat("int32", {
    type: "number",
    validate: (n: number) => Number.isInteger(n) && n >= -INT32 && n < INT32,
  });
  ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s)));
  ajv.addSchema(schema);
  return ajv;
}

/** The schema's complaints about value as a `kind` of this version: empty when it is valid. */
export function schemaErrors(
  kind: "Pod" | "NetworkPolicy",
  version: KubernetesVersion,
  value: unknown,
): string[] {
  const key = `${version}/${kind}`;
  let validate = compiled.get(key);
  if (!validate) {
    const ajv = load(version);
    const check = ajv.getSchema(`https://drydock.invalid/kubernetes-${version}.schema.json#/$defs/${kind}`);
    if (!check) throw new Error(`the ${version} schema has no ${kind}`);
    validate = (v) =>
      check(v)
        ? []
        : (check.errors ?? []).map((e: ErrorObject) => `${e.instancePath || "/"} ${e.message ?? e.keyword}`);
    compiled.set(key, validate);
  }
  return validate(value);
}
