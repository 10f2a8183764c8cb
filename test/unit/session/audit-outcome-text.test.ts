import { describe, expect, it } from "vitest";
import { auditOutcomeText } from "../../../src/session/audit-text.js";

describe("auditOutcomeText", () => {
  it("shows a person's command's status as the box's word, and a tool's exit code as its own", () => {
    expect(auditOutcomeText({ ok: false, box_reported_exit_code: 2 })).toBe("exit 2 (box's word)");
    expect(auditOutcomeText({ ok: true, box_reported_exit_code: null })).toBe("ok");
    expect(auditOutcomeText({ ok: false, exit_code: 1 })).toBe("exit 1");
  });
});
