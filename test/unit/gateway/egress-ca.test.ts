import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveCaBundle } from "../../../src/gateway/egress-ca.js";

describe("resolveCaBundle", () => {
  const dir = mkdtempSync(join(tmpdir(), "drydock-ca-"));
  const pem = join(dir, "ca.pem");
  writeFileSync(pem, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  const notPem = join(dir, "notes.txt");
  writeFileSync(notPem, "hello\n");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("takes --ca-cert first, then SSL_CERT_FILE", () => {
    expect(resolveCaBundle(pem, { SSL_CERT_FILE: "/nonexistent" })).toBe(pem);
    expect(resolveCaBundle(undefined, { SSL_CERT_FILE: pem })).toBe(pem);
  });

  it("names --ca-cert and the file when it is missing or holds no certificate", () => {
    expect(() => resolveCaBundle(join(dir, "missing.pem"), {})).toThrow(
      /^--ca-cert: .*missing\.pem is not a file/,
    );
    expect(() => resolveCaBundle(dir, {})).toThrow(/^--ca-cert: .* is not a file/);
    expect(() => resolveCaBundle(notPem, {})).toThrow(/^--ca-cert: .*notes\.txt holds no PEM certificate/);
    expect(() => resolveCaBundle(undefined, { SSL_CERT_FILE: notPem })).toThrow(
      /notes\.txt \(from SSL_CERT_FILE\) holds no PEM/,
    );
  });
});
