import { describe, expect, it } from "vitest";
import {
  aiderOptionsSchema,
  mergeAiderOptions,
  parseAiderOptions,
} from "../../../src/tools/aider/aider-options.js";
import { InvalidArgumentError } from "../../../src/util/errors.js";

describe("aider options", () => {
  it("lets a call override the server's options field by field", () => {
    const server = { edit_format: "whole" as const, map_tokens: 0, test_cmd: "make test" };
    expect(mergeAiderOptions(server, { map_tokens: 2048, auto_test: true })).toEqual({
      edit_format: "whole",
      map_tokens: 2048,
      test_cmd: "make test",
      auto_test: true,
    });
    expect(mergeAiderOptions(server, undefined)).toEqual(server);
    expect(mergeAiderOptions(server, { edit_format: undefined })).toEqual(server);
  });

  it("parses the server's JSON options and names the bad key or value", () => {
    expect(parseAiderOptions(undefined, "DRYDOCK_AIDER_OPTIONS")).toEqual({});
    expect(parseAiderOptions(' {"edit_format":"udiff","map_tokens":512} ', "X")).toEqual({
      edit_format: "udiff",
      map_tokens: 512,
    });
    expect(() => parseAiderOptions("{nope", "DRYDOCK_AIDER_OPTIONS")).toThrow(
      /DRYDOCK_AIDER_OPTIONS: is not JSON/,
    );
    expect(() => parseAiderOptions('{"edit_format":"ask"}', "DRYDOCK_AIDER_OPTIONS")).toThrow(
      /DRYDOCK_AIDER_OPTIONS\.edit_format/,
    );
    expect(() => parseAiderOptions('{"yes":true}', "DRYDOCK_AIDER_OPTIONS")).toThrow(InvalidArgumentError);
    expect(() => parseAiderOptions('{"yes":true}', "DRYDOCK_AIDER_OPTIONS")).toThrow(
      /allowed keys: edit_format, map_tokens/,
    );
  });

  it("refuses commands that span lines, so each stays one argument", () => {
    expect(aiderOptionsSchema.safeParse({ test_cmd: "pytest\nrm -rf /" }).success).toBe(false);
    expect(aiderOptionsSchema.safeParse({ test_cmd: "pytest -q" }).success).toBe(true);
  });

  it("bounds the time limit and the map size", () => {
    expect(aiderOptionsSchema.safeParse({ timeout_s: 5 }).success).toBe(false);
    expect(aiderOptionsSchema.safeParse({ timeout_s: 60 }).success).toBe(true);
    expect(aiderOptionsSchema.safeParse({ map_tokens: -1 }).success).toBe(false);
  });
});
