import { describe, expect, it } from "vitest";
import { EditHistory } from "../../../src/tools/edit/edit-history.js";
import { NotFoundError } from "../../../src/util/errors.js";

describe("EditHistory", () => {
  it("pops previous contents newest first, per file", () => {
    const history = new EditHistory();
    history.push("/w/a", "a0");
    history.push("/w/b", "b0");
    history.push("/w/a", "a1");
    expect(history.pop("/w/a")).toBe("a1");
    expect(history.pop("/w/b")).toBe("b0");
    expect(history.pop("/w/a")).toBe("a0");
  });

  it("says there is nothing to undo, naming the path", () => {
    const history = new EditHistory();
    expect(() => history.pop("/w/none")).toThrow(NotFoundError);
    expect(() => history.pop("/w/none")).toThrow(/^nothing to undo for \/w\/none/);
    history.push("/w/a", "x");
    history.pop("/w/a");
    expect(() => history.pop("/w/a")).toThrow(/nothing to undo for \/w\/a/);
  });

  it("records a created file as null, meaning undo deletes it", () => {
    const history = new EditHistory();
    history.push("/w/new", null);
    expect(history.pop("/w/new")).toBeNull();
  });

  it("keeps at most maxEntriesPerFile steps, dropping the oldest", () => {
    const history = new EditHistory({ maxEntriesPerFile: 2 });
    for (const content of ["v0", "v1", "v2"]) history.push("/w/a", content);
    expect(history.depth("/w/a")).toBe(2);
    expect(history.pop("/w/a")).toBe("v2");
    expect(history.pop("/w/a")).toBe("v1");
    expect(() => history.pop("/w/a")).toThrow(NotFoundError);
  });

  it("evicts the oldest steps of any file when over the size bound", () => {
    const history = new EditHistory({ maxTotalChars: 10 });
    history.push("/w/a", "aaaa");
    history.push("/w/b", "bbbb");
    history.push("/w/c", "cccc");
    expect(history.heldChars).toBe(8);
    expect(history.depth("/w/a")).toBe(0);
    expect(history.pop("/w/c")).toBe("cccc");
    expect(history.heldChars).toBe(4);
  });

  it("refuses content over the bound and clears that file's history", () => {
    const history = new EditHistory({ maxTotalChars: 10 });
    history.push("/w/a", "small");
    expect(history.push("/w/a", "x".repeat(11))).toBe(false);
    expect(history.depth("/w/a")).toBe(0);
    expect(history.heldChars).toBe(0);
  });
});
