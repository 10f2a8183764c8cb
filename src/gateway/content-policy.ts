/**
 * What a model call's messages may hold: text, tool calls and their results, and images sent
 * inline, no larger than the caps below. Anything that names something for the provider to fetch
 * (an image or document by URL, Gemini `fileData`) would let the box send the repository to an
 * address of its choosing; anything that names a file stored in the operator's account would let
 * it read what the account holds. Both are refused, as is every part type not known here, so a
 * type a provider adds later is refused until it is read. Pure.
 */
import { isRecord } from "./chat-request.js";
import type { Provider } from "./providers.js";

/**
 * Decoded bytes one inline image may have: Anthropic's own limit per image (5 MB), which is the
 * lowest of the three providers', so no image that passes here is one a provider would refuse.
 */
export const MAX_INLINE_IMAGE_BYTES = 5 * 1024 * 1024;

/** Decoded bytes all inline images of one request may have together (a request body is at most 64 MiB). */
export const MAX_INLINE_IMAGES_BYTES = 20 * 1024 * 1024;

const IMAGE_TYPE = /^image\/(png|jpeg|gif|webp|heic|heif)$/i;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

const OPENAI_KINDS = "text parts and images inline (image_url with a data: URL)";
const ANTHROPIC_KINDS = "text, images inline (a base64 source), tool use and tool results, and thinking";
const GEMINI_KINDS = "text, images inline (inlineData), function calls and function responses";

/**
 * Why a request's content is refused, as `field.path: what is wrong; how to fix it`, or undefined
 * when it may go on. `body` is the parsed JSON body of a model call.
 */
export function contentRefusal(provider: Provider, body: Record<string, unknown>): string | undefined {
  const images = new ImageTally();
  if (provider === "openai") return openaiContent(body, images);
  if (provider === "anthropic") return anthropicContent(body, images);
  if (provider === "gemini") return geminiContent(body, images);
  return undefined;
}

/** Adds up the decoded size of a request's inline images against both caps. */
class ImageTally {
  private total = 0;

  /** Why this image is refused, or undefined; counts it when it is not. */
  add(at: string, base64: string): string | undefined {
    if (!BASE64.test(base64)) return `${at}: the image data is not base64; send it base64-encoded`;
    const bytes = Math.floor((base64.replace(/=+$/, "").length * 3) / 4);
    if (bytes > MAX_INLINE_IMAGE_BYTES) {
      return `${at}: the inline image is ${bytes} bytes, over the cap of ${MAX_INLINE_IMAGE_BYTES} bytes per image; send a smaller image`;
    }
    this.total += bytes;
    if (this.total > MAX_INLINE_IMAGES_BYTES) {
      return `${at}: the request's inline images come to ${this.total} bytes, over the cap of ${MAX_INLINE_IMAGES_BYTES} bytes per request; send fewer or smaller images`;
    }
    return undefined;
  }
}

function openaiContent(body: Record<string, unknown>, images: ImageTally): string | undefined {
  for (const [i, message] of list(body.messages)) {
    if (!isRecord(message)) continue;
    for (const [j, part] of list(message.content)) {
      const refusal = openaiPart(part, `messages[${i}].content[${j}]`, images);
      if (refusal) return refusal;
    }
  }
  return undefined;
}

function openaiPart(part: unknown, at: string, images: ImageTally): string | undefined {
  if (!isRecord(part))
    return `${at}: a content part must be an object with a type; the gateway carries ${OPENAI_KINDS}`;
  if (part.type === "text" || part.type === "refusal") return undefined;
  if (part.type !== "image_url") return unknownType(at, part.type, "parts", OPENAI_KINDS);
  const image = part.image_url;
  if (!isRecord(image) || typeof image.url !== "string") {
    return `${at}.image_url: must be an object whose url is a data: URL, e.g. {"url": "data:image/png;base64,…"}`;
  }
  const where = `${at}.image_url.url`;
  const data = /^data:([^;,]*)((?:;[^;,]*)*),/.exec(image.url);
  if (!data) {
    return `${where}: URL references are refused; send the image inline as a data: URL (data:image/png;base64,…), since the provider would fetch the address for the box`;
  }
  if (!IMAGE_TYPE.test(data[1] ?? "")) {
    return `${where}: a data: URL of type "${data[1]}" is refused; only images are carried (image/png, image/jpeg, image/gif, image/webp)`;
  }
  if (!(data[2] ?? "").split(";").includes("base64")) {
    return `${where}: the data: URL is not base64; send it as data:${data[1]};base64,…`;
  }
  return images.add(where, image.url.slice(data[0].length));
}

function anthropicContent(body: Record<string, unknown>, images: ImageTally): string | undefined {
  for (const [i, block] of list(body.system)) {
    if (isRecord(block) && block.type === "text") continue;
    const type = isRecord(block) ? String(block.type) : typeof block;
    return `system[${i}].type: ${type} blocks are refused in the system prompt; send text blocks`;
  }
  for (const [i, message] of list(body.messages)) {
    if (!isRecord(message)) continue;
    for (const [j, block] of list(message.content)) {
      const refusal = anthropicBlock(block, `messages[${i}].content[${j}]`, images, true);
      if (refusal) return refusal;
    }
  }
  return undefined;
}

function anthropicBlock(
  block: unknown,
  at: string,
  images: ImageTally,
  topLevel: boolean,
): string | undefined {
  if (!isRecord(block))
    return `${at}: a content block must be an object with a type; the gateway carries ${ANTHROPIC_KINDS}`;
  if (block.type === "text") return undefined;
  if (block.type === "image") return anthropicImage(block.source, `${at}.source`, images);
  // Tool calls and thinking belong to a message; a tool result holds text and images only.
  if (topLevel && ["tool_use", "thinking", "redacted_thinking"].includes(String(block.type)))
    return undefined;
  if (topLevel && block.type === "tool_result") {
    for (const [k, inner] of list(block.content)) {
      const refusal = anthropicBlock(inner, `${at}.content[${k}]`, images, false);
      if (refusal) return refusal;
    }
    return undefined;
  }
  return unknownType(at, block.type, "blocks", ANTHROPIC_KINDS);
}

function anthropicImage(source: unknown, at: string, images: ImageTally): string | undefined {
  if (!isRecord(source))
    return `${at}: must be a base64 source, e.g. {"type": "base64", "media_type": "image/png", "data": "…"}`;
  if (source.type !== "base64") {
    const kind =
      typeof source.type === "string" ? `${source.type} sources are` : "a source without a type is";
    return `${at}.type: ${kind} refused; send the image inline as a base64 source ({"type": "base64", "media_type": "image/png", "data": "…"}), since the provider would fetch a URL or read a file stored in the account`;
  }
  if (typeof source.media_type !== "string" || !IMAGE_TYPE.test(source.media_type)) {
    return `${at}.media_type: ${String(source.media_type)} is refused; only images are carried (image/png, image/jpeg, image/gif, image/webp)`;
  }
  if (typeof source.data !== "string") return `${at}.data: must be the image, base64-encoded`;
  return images.add(`${at}.data`, source.data);
}

function geminiContent(body: Record<string, unknown>, images: ImageTally): string | undefined {
  for (const field of ["cachedContent", "cached_content"]) {
    if (body[field] !== undefined) {
      return `${field}: content cached in the provider account is refused; send the content in the request`;
    }
  }
  for (const field of ["systemInstruction", "system_instruction"]) {
    const instruction = body[field];
    if (!isRecord(instruction)) continue;
    const refusal = geminiParts(instruction.parts, `${field}.parts`, images);
    if (refusal) return refusal;
  }
  for (const [i, content] of list(body.contents)) {
    if (!isRecord(content)) continue;
    const refusal = geminiParts(content.parts, `contents[${i}].parts`, images);
    if (refusal) return refusal;
  }
  return undefined;
}

/** Gemini part fields that carry no reference and need no look inside (snake_case is accepted too). */
const GEMINI_PLAIN_FIELDS = new Set([
  "text",
  "thought",
  "thoughtSignature",
  "thought_signature",
  "functionCall",
  "function_call",
]);

function geminiParts(parts: unknown, at: string, images: ImageTally): string | undefined {
  for (const [j, part] of list(parts)) {
    const here = `${at}[${j}]`;
    if (!isRecord(part)) return `${here}: a part must be an object; the gateway carries ${GEMINI_KINDS}`;
    for (const [field, value] of Object.entries(part)) {
      if (GEMINI_PLAIN_FIELDS.has(field)) continue;
      let refusal: string | undefined;
      if (field === "inlineData" || field === "inline_data") {
        refusal = geminiImage(value, `${here}.${field}`, images);
      } else if (field === "functionResponse" || field === "function_response") {
        refusal = isRecord(value) ? geminiParts(value.parts, `${here}.${field}.parts`, images) : undefined;
      } else if (field === "fileData" || field === "file_data") {
        refusal = `${here}.${field}: file references are refused; send the image inline as inlineData, since the provider would fetch the URI or read a file stored in the account`;
      } else {
        refusal = `${here}.${field}: ${field} parts are refused; the gateway carries ${GEMINI_KINDS}`;
      }
      if (refusal) return refusal;
    }
  }
  return undefined;
}

function geminiImage(data: unknown, at: string, images: ImageTally): string | undefined {
  if (!isRecord(data)) return `${at}: must be {"mimeType": "image/png", "data": "…base64…"}`;
  const typeField = "mimeType" in data ? "mimeType" : "mime_type";
  const type = data[typeField];
  if (typeof type !== "string" || !IMAGE_TYPE.test(type)) {
    return `${at}.${typeField}: ${String(type)} is refused; only images are carried (image/png, image/jpeg, image/gif, image/webp)`;
  }
  if (typeof data.data !== "string") return `${at}.data: must be the image, base64-encoded`;
  return images.add(`${at}.data`, data.data);
}

function unknownType(at: string, type: unknown, kind: string, carried: string): string {
  const name = typeof type === "string" ? `${type} ${kind} are` : `${kind} without a type are`;
  const hint = type === "file" || type === "document" ? "; send a file's text as text" : "";
  return `${at}.type: ${name} refused; the gateway carries ${carried}${hint}`;
}

/** The entries of a value that is a list, none otherwise (a string content has no parts). */
function list(value: unknown): Array<[number, unknown]> {
  return Array.isArray(value) ? [...value.entries()] : [];
}
