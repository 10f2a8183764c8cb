import { describe, expect, it } from "vitest";
import {
  contentRefusal,
  MAX_INLINE_IMAGE_BYTES,
  MAX_INLINE_IMAGES_BYTES,
} from "../../../src/gateway/content-policy.js";

const base64 = (bytes: number) => Buffer.alloc(bytes, 1).toString("base64");
const openai = (...urls: string[]) => ({
  model: "gpt-4o",
  messages: [{ role: "user", content: urls.map((url) => ({ type: "image_url", image_url: { url } })) }],
});
const claude = (...blocks: unknown[]) => ({ messages: [{ role: "user", content: blocks }] });
const claudeImage = (data: string, media_type = "image/png") => ({
  type: "image",
  source: { type: "base64", media_type, data },
});

describe("contentRefusal", () => {
  it("caps an inline image at 5 MiB decoded, the cap included", () => {
    expect(MAX_INLINE_IMAGE_BYTES).toBe(5 * 1024 * 1024);
    for (const size of [MAX_INLINE_IMAGE_BYTES - 1, MAX_INLINE_IMAGE_BYTES]) {
      expect(contentRefusal("openai", openai(`data:image/png;base64,${base64(size)}`))).toBeUndefined();
      expect(contentRefusal("anthropic", claude(claudeImage(base64(size))))).toBeUndefined();
    }
    expect(contentRefusal("anthropic", claude(claudeImage(base64(MAX_INLINE_IMAGE_BYTES + 1))))).toMatch(
      /^messages\[0\]\.content\[0\]\.source\.data: the inline image is 5242881 bytes, over the cap/,
    );
  });

  it("caps a request's inline images at 20 MiB together, the cap included", () => {
    expect(MAX_INLINE_IMAGES_BYTES).toBe(20 * 1024 * 1024);
    const full = Array.from({ length: 4 }, () => `data:image/jpeg;base64,${base64(MAX_INLINE_IMAGE_BYTES)}`);
    expect(contentRefusal("openai", openai(...full))).toBeUndefined();
    expect(contentRefusal("openai", openai(...full, `data:image/png;base64,${base64(3)}`))).toMatch(
      /^messages\[0\]\.content\[4\]\.image_url\.url: the request's inline images come to 20971523 bytes/,
    );
    const gemini = {
      contents: [1, 2, 3, 4, 5].map(() => ({
        parts: [{ inline_data: { mime_type: "image/png", data: base64(MAX_INLINE_IMAGE_BYTES) } }],
      })),
    };
    expect(contentRefusal("gemini", gemini)).toMatch(
      /^contents\[4\]\.parts\[0\]\.inline_data\.data: the request's/,
    );
  });

  it("refuses image data that is not base64", () => {
    expect(contentRefusal("openai", openai("data:image/png;base64,not base64!"))).toMatch(
      /^messages\[0\]\.content\[0\]\.image_url\.url: the image data is not base64/,
    );
    expect(contentRefusal("anthropic", claude(claudeImage("%%%")))).toMatch(
      /source\.data: the image data is not base64/,
    );
  });

  it("refuses a data: URL whose type is not an image, wherever its parameters put base64", () => {
    expect(contentRefusal("openai", openai(`data:image/svg+xml;base64,${base64(3)}`))).toMatch(
      /a data: URL of type "image\/svg\+xml" is refused/,
    );
    expect(contentRefusal("openai", openai(`data:image/png;name=a.png;base64,${base64(3)}`))).toBeUndefined();
    expect(contentRefusal("openai", openai(`DATA:image/png;base64,${base64(3)}`))).toMatch(
      /URL references are refused/,
    );
    expect(contentRefusal("anthropic", claude(claudeImage(base64(3), "application/pdf")))).toMatch(
      /^messages\[0\]\.content\[0\]\.source\.media_type: application\/pdf is refused/,
    );
  });

  it("lets a tool result hold text and images only", () => {
    const result = (...content: unknown[]) => claude({ type: "tool_result", tool_use_id: "t", content });
    expect(
      contentRefusal("anthropic", result({ type: "text", text: "ok" }, claudeImage(base64(3)))),
    ).toBeUndefined();
    expect(
      contentRefusal("anthropic", claude({ type: "tool_result", tool_use_id: "t", content: "ok" })),
    ).toBeUndefined();
    expect(
      contentRefusal("anthropic", result({ type: "document", source: { type: "text", data: "x" } })),
    ).toMatch(/^messages\[0\]\.content\[0\]\.content\[0\]\.type: document blocks are refused/);
    expect(contentRefusal("anthropic", result({ type: "tool_use", id: "u", name: "f", input: {} }))).toMatch(
      /content\[0\]\.type: tool_use blocks are refused/,
    );
  });

  it("refuses parts that are not objects or have no type, and passes plain string content", () => {
    expect(contentRefusal("openai", { messages: [{ role: "user", content: ["hi"] }] })).toMatch(
      /^messages\[0\]\.content\[0\]: a content part must be an object with a type/,
    );
    expect(contentRefusal("anthropic", claude({ text: "hi" }))).toMatch(
      /^messages\[0\]\.content\[0\]\.type: blocks without a type are refused/,
    );
    expect(contentRefusal("gemini", { contents: [{ parts: ["hi"] }] })).toMatch(
      /^contents\[0\]\.parts\[0\]: a part must be an object/,
    );
    expect(contentRefusal("openai", { messages: [{ role: "user", content: "hi" }] })).toBeUndefined();
    expect(
      contentRefusal("anthropic", { system: "be brief", messages: [{ role: "user", content: "hi" }] }),
    ).toBeUndefined();
  });

  it("refuses a Gemini part field it does not know, such as code run by the provider", () => {
    expect(
      contentRefusal("gemini", {
        contents: [{ parts: [{ executableCode: { language: "PYTHON", code: "1" } }] }],
      }),
    ).toMatch(/^contents\[0\]\.parts\[0\]\.executableCode: executableCode parts are refused/);
  });

  it("leaves the offline model's calls alone", () => {
    expect(contentRefusal("offline", openai("https://example.com/a.png"))).toBeUndefined();
  });
});
