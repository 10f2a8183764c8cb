/**
 * A box's name and labels as Kubernetes object metadata. Kubernetes is stricter than Docker: a
 * label value is at most 63 characters of [A-Za-z0-9-_.], so drydock's owner ("host/pid/ticks"),
 * state directory (a path) and creation time (ISO, with colons) cannot be label values. Each such
 * value goes into an annotation under the same key, and the label holds a digest of it, so a
 * selector can still ask for "this owner" (`labelSelectorValue`) and a listing can give back the
 * value itself (`boxLabelsOf`).
 */
import { createHash } from "node:crypto";
import { InvalidArgumentError } from "../../util/errors.js";

/** An object whose deletion takes this one with it (the garbage collector's owner), in the same namespace. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** A DNS-1123 subdomain: what names Pods and NetworkPolicies. */
export function isDnsSubdomain(name: string): boolean {
  return name.length <= 253 && name.split(".").every((part) => DNS_LABEL.test(part));
}

/** A DNS-1123 label: what names namespaces, containers and volumes. */
export function isDnsLabel(name: string): boolean {
  return name.length <= 63 && DNS_LABEL.test(name);
}

/** A label key: an optional DNS subdomain prefix and "/", then a name of at most 63 characters. */
export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf("/");
  const name = key.slice(slash + 1);
  if (name.length > 63 || !LABEL_NAME.test(name)) return false;
  return slash < 0 || isDnsSubdomain(key.slice(0, slash));
}

/** A label value: empty, or at most 63 characters of [A-Za-z0-9-_.] starting and ending alphanumeric. */
export function isLabelValue(value: string): boolean {
  return value === "" || (value.length <= 63 && LABEL_NAME.test(value));
}

/** What a label holds for a value: the value itself, or its digest when it cannot be a label value. */
export function labelSelectorValue(value: string): string {
  return isLabelValue(value) ? value : createHash("sha256").update(value).digest("hex").slice(0, 40);
}

/** Checks a name for a Pod or NetworkPolicy; `field` names the option a bad one came from. */
export function checkObjectName(name: string | undefined, field: string): string {
  if (!name) {
    throw new InvalidArgumentError(field, "a box on Kubernetes needs a name (its Pod's and NetworkPolicy's)");
  }
  if (!isDnsSubdomain(name)) {
    throw new InvalidArgumentError(
      field,
      `"${name}" is not a Kubernetes object name: use lower-case letters, digits, "-" and ".", at most 253 characters, starting and ending with a letter or digit`,
    );
  }
  return name;
}

/** Checks a namespace name. */
export function checkNamespace(namespace: string): string {
  if (!isDnsLabel(namespace)) {
    throw new InvalidArgumentError(
      "namespace",
      `"${namespace}" is not a Kubernetes namespace: use lower-case letters, digits and "-", at most 63 characters`,
    );
  }
  return namespace;
}

/** Metadata for a box's objects: each label kept as a label, or (see above) a digest and an annotation. */
export function metadataFor(name: string, namespace: string, boxLabels: Record<string, string>): ObjectMeta {
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(boxLabels)) {
    if (!isLabelKey(key)) {
      throw new InvalidArgumentError(
        `labels.${key}`,
        'not a Kubernetes label key: a name of at most 63 characters of letters, digits, "-", "_" and ".", with an optional DNS prefix and "/"',
      );
    }
    labels[key] = labelSelectorValue(value);
    if (labels[key] !== value) annotations[key] = value;
  }
  return {
    name: checkObjectName(name, "name"),
    namespace: checkNamespace(namespace),
    labels,
    ...(Object.keys(annotations).length ? { annotations } : {}),
  };
}

/** The box's labels as drydock set them, from an object's labels and annotations. */
export function boxLabelsOf(metadata: {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata.labels ?? {})) {
    const original = metadata.annotations?.[key];
    out[key] = original !== undefined && labelSelectorValue(original) === value ? original : value;
  }
  return out;
}
