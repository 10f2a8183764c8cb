import { describe, expect, it } from "vitest";
import { aiderServiceFromOptions } from "../../../src/tools/aider/aider-config.js";
import { errorText, toolClient } from "./registered-tools.js";

// The seed's clients (aider-mcp-server.md, AiderBridge) parse every reply's text as JSON and look
// at "success" and "error"; bad input must not answer them with plain text.
describe("aider_ai_code and list_models errors in the seed's JSON", () => {
  const aider = aiderServiceFromOptions({ llm: "offline" }, {});
  const call = async (args: Record<string, unknown>) => {
    await using c = await toolClient(undefined, { aider });
    const text = errorText(await c.callTool({ name: "aider_ai_code", arguments: args }));
    return JSON.parse(text) as { success: boolean; diff: string; error: string };
  };

  it.each([
    [
      "an empty prompt",
      { ai_coding_prompt: "", relative_editable_files: ["a.py"] },
      /^ai_coding_prompt: is empty; say what aider should change/,
    ],
    [
      "an empty file list",
      { ai_coding_prompt: "x", relative_editable_files: [] },
      /^relative_editable_files: is empty; name at least one file/,
    ],
    ["a missing file list", { ai_coding_prompt: "x" }, /^relative_editable_files: is required/],
    [
      "a path outside the repository",
      { ai_coding_prompt: "x", relative_editable_files: ["../../etc/passwd"] },
      /^path "\.\.\/\.\.\/etc\/passwd" is refused: .*outside \/workspace/,
    ],
    [
      "an unknown model",
      { ai_coding_prompt: "x", relative_editable_files: ["a.py"], model: "acme/no-such-model" },
      /^model: "acme\/no-such-model" is not a model the gateway can route.*list_models/,
    ],
    [
      "an unknown argument",
      { ai_coding_prompt: "x", relative_editable_files: ["a.py"], files: ["a.py"] },
      /^files: is not an argument of aider_ai_code/,
    ],
  ])("answers %s with success false, the reason in diff and error, and isError", async (_, args, reason) => {
    const reply = await call(args);
    expect(reply.success).toBe(false);
    expect(reply.error).toMatch(reason);
    expect(reply.diff).toBe(reply.error);
  });

  it("answers list_models' bad input with {error}", async () => {
    await using c = await toolClient(undefined, { aider });
    const text = errorText(await c.callTool({ name: "list_models", arguments: { substring: 3 } }));
    expect(JSON.parse(text)).toEqual({ error: expect.stringMatching(/^substring: /) });
  });
});
