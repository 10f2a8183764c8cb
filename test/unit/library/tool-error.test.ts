import { describe, expect, it } from "vitest";
import { errorFromToolReply, errorMetaOf, UNKNOWN_TOOL_ERROR } from "../../../src/library/tool-error.js";
import { IsDirectoryError } from "../../../src/tools/box-files.js";
import {
  ApplyConflictError,
  BinaryFileError,
  BoxGoneError,
  CommandExitError,
  DrydockError,
  EngineUnavailableError,
  InvalidArgumentError,
  LimitExceededError,
  NotFoundError,
  PathOutsideWorkspaceError,
  SessionNotFoundError,
  UnsafeDiffError,
} from "../../../src/util/errors.js";
import { ERROR_META_KEY, errorMeta } from "../../../src/util/tool-error-meta.js";

/** What the server's one tool wrapper sends for `error`, read back as the library reads it. */
function roundTrip(error: Error): DrydockError {
  const reply = { isError: true, _meta: { [ERROR_META_KEY]: errorMeta(error) } };
  return errorFromToolReply(error.message, errorMetaOf(JSON.parse(JSON.stringify(reply)) as object));
}

describe("errorFromToolReply", () => {
  const errors: Array<[string, DrydockError]> = [
    ["PathOutsideWorkspaceError", new PathOutsideWorkspaceError("../x")],
    ["NotFoundError", new NotFoundError("a.txt does not exist in /workspace")],
    ["SessionNotFoundError", new SessionNotFoundError("abc")],
    ["InvalidArgumentError", new InvalidArgumentError("branch", "exists")],
    ["IsDirectoryError", new IsDirectoryError("path", "sub")],
    ["ApplyConflictError", new ApplyConflictError(["a.txt"], "")],
    ["UnsafeDiffError", new UnsafeDiffError("touches .git")],
    ["BinaryFileError", new BinaryFileError("a.bin")],
    ["BoxGoneError", new BoxGoneError("123")],
    ["CommandExitError", new CommandExitError(2, "boom", "git diff")],
    ["EngineUnavailableError", new EngineUnavailableError("refused")],
    ["LimitExceededError", new LimitExceededError("too big")],
  ];

  it.each(errors)("raises a %s as the same class, code and message", (_name, original) => {
    const raised = roundTrip(original);
    expect(raised).toBeInstanceOf(original.constructor);
    expect(raised).toBeInstanceOf(DrydockError);
    expect(raised.name).toBe(original.name);
    expect(raised.code).toBe(original.code);
    expect(raised.message).toBe(original.message);
  });

  it("keeps the field an invalid argument names", () => {
    const raised = roundTrip(new InvalidArgumentError("replace_branch", "applies to branch mode"));
    expect(raised).toBeInstanceOf(InvalidArgumentError);
    expect((raised as InvalidArgumentError).field).toBe("replace_branch");
  });

  it("gives a reply without meta the code tool_error and the server's message", () => {
    const raised = errorFromToolReply("something broke", errorMetaOf({}));
    expect(raised).toBeInstanceOf(DrydockError);
    expect(raised.code).toBe(UNKNOWN_TOOL_ERROR);
    expect(raised.message).toBe("something broke");
  });

  it("keeps the code of a class it does not know, and ignores names of Object's own members", () => {
    for (const name of ["GatewayError", "toString", "__proto__", "constructor"]) {
      const raised = errorFromToolReply("m", { code: "some_code", name });
      expect(raised.constructor).toBe(DrydockError);
      expect(raised.code).toBe("some_code");
    }
  });

  it("ignores meta that is not ours or is malformed", () => {
    expect(errorMetaOf({ _meta: { other: 1 } })).toBeUndefined();
    expect(errorMetaOf({ _meta: { [ERROR_META_KEY]: { code: 3, name: "X" } } })).toBeUndefined();
    expect(errorMeta(new Error("plain"))).toBeUndefined();
  });
});
