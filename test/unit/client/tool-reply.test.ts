import { describe, expect, it } from "vitest";
import { mapToolReply } from "../../../src/client/tool-reply.js";

const text = (value: unknown) => ({ content: [{ type: "text", text: JSON.stringify(value) }] });

describe("mapToolReply", () => {
  it("maps an aider_ai_code success to COMPLETE with the diff as content", () => {
    const result = mapToolReply("aider_ai_code", text({ success: true, diff: "diff --git a/x b/x\n" }));
    expect(result).toEqual({ status: "COMPLETE", content: "diff --git a/x b/x\n", notes: { success: true } });
  });

  it("treats the seed's `error: null` on success as no error", () => {
    const result = mapToolReply("aider_ai_code", text({ success: true, diff: "d", error: null }));
    expect(result.status).toBe("COMPLETE");
  });

  it("lays structuredContent over the text JSON", () => {
    const result = mapToolReply("aider_ai_code", {
      ...text({ success: true, diff: "d" }),
      structuredContent: { success: true, diff: "d", model: "m", cost_usd: 0.5 },
    });
    expect(result).toEqual({
      status: "COMPLETE",
      content: "d",
      notes: { success: true, model: "m", cost_usd: 0.5 },
    });
  });

  it("fails on success:false and quotes the server's message", () => {
    const result = mapToolReply("aider_ai_code", text({ success: false, diff: "SEARCH did not match" }));
    expect(result.status).toBe("FAILED");
    expect(result.content).toContain('"success": false');
    expect(result.content).toContain("SEARCH did not match");
    expect(result.notes).toMatchObject({ failure: "success_false", success: false });
  });

  it("fails on an error key, for any tool", () => {
    const result = mapToolReply("list_models", text({ error: "boom" }));
    expect(result.status).toBe("FAILED");
    expect(result.content).toBe("list_models failed: the server reported an error: boom");
    expect(result.notes.failure).toBe("error_key");
  });

  it("fails on an isError result with the server's text", () => {
    const result = mapToolReply("aider_ai_code", {
      isError: true,
      content: [{ type: "text", text: "path is outside /workspace" }],
    });
    expect(result.status).toBe("FAILED");
    expect(result.content).toContain("tool error: path is outside /workspace");
    expect(result.notes.failure).toBe("tool_error");
  });

  it("reads the message of an isError result whose text is the seed's JSON", () => {
    const message = "relative_editable_files: is empty; name at least one file aider may edit";
    const result = mapToolReply("aider_ai_code", {
      isError: true,
      content: [{ type: "text", text: JSON.stringify({ success: false, diff: message, error: message }) }],
    });
    expect(result.status).toBe("FAILED");
    expect(result.content).toBe(`aider_ai_code failed: the server reported a tool error: ${message}`);
    expect(result.notes).toMatchObject({
      failure: "tool_error",
      success: false,
      diff: message,
      error: message,
    });
  });

  it("fails on text that is not JSON and keeps the raw text", () => {
    const result = mapToolReply("aider_ai_code", { content: [{ type: "text", text: "hello" }] });
    expect(result.status).toBe("FAILED");
    expect(result.content).toContain("not valid JSON");
    expect(result.notes).toMatchObject({ failure: "invalid_reply", raw: "hello" });
  });

  it("fails on a reply with no content at all", () => {
    const result = mapToolReply("aider_ai_code", { content: [] });
    expect(result.notes.failure).toBe("invalid_reply");
    expect(result.content).toContain("no text content");
  });

  it("fails on an aider_ai_code reply with neither diff nor job id", () => {
    const result = mapToolReply("aider_ai_code", text({ success: true }));
    expect(result.status).toBe("FAILED");
    expect(result.content).toContain('neither a "diff" nor a "job_id"');
  });

  it("completes a background aider_ai_code run that returned a job id", () => {
    const result = mapToolReply("aider_ai_code", text({ job_id: "j1" }));
    expect(result).toMatchObject({ status: "COMPLETE", notes: { job_id: "j1" } });
  });

  it("puts list_models' models in notes and one per line in content", () => {
    const result = mapToolReply("list_models", text({ models: ["a", "b"] }));
    expect(result).toEqual({ status: "COMPLETE", content: "a\nb", notes: { models: ["a", "b"] } });
  });

  it("fails a list_models reply without a models list", () => {
    expect(mapToolReply("list_models", text({ models: "a" })).notes.failure).toBe("invalid_reply");
  });

  it("keeps any other tool's JSON reply in notes and its text as content", () => {
    const result = mapToolReply("bash", text({ output: "hi\n", exit_code: 0 }));
    expect(result).toEqual({
      status: "COMPLETE",
      content: JSON.stringify({ output: "hi\n", exit_code: 0 }),
      notes: { output: "hi\n", exit_code: 0 },
    });
  });

  it("wraps a JSON reply that is not an object", () => {
    expect(mapToolReply("count", text([1, 2])).notes).toEqual({ value: [1, 2] });
  });

  it("reads structuredContent alone when the text is not JSON", () => {
    const result = mapToolReply("session_list", {
      content: [{ type: "text", text: "2 sessions" }],
      structuredContent: { sessions: ["a", "b"] },
    });
    expect(result).toEqual({ status: "COMPLETE", content: "2 sessions", notes: { sessions: ["a", "b"] } });
  });
});
