/**
 * Reading the parts of a chat request the gateway and the offline model care about, whatever the
 * provider's shape: OpenAI `messages`, Anthropic `system` + `messages`, Gemini `contents`.
 */
export interface ChatText {
  /** The text of each message, in order (system prompts included). */
  messages: string[];
  /** The text of the last message from the user, "" when there is none. */
  lastUser: string;
}

export function chatText(body: unknown): ChatText {
  const messages: string[] = [];
  let lastUser = "";
  if (!isRecord(body)) return { messages, lastUser };
  if (body.system !== undefined) messages.push(partsText(body.system));
  if (isRecord(body.systemInstruction)) messages.push(partsText(body.systemInstruction.parts));
  const list = Array.isArray(body.messages)
    ? body.messages
    : Array.isArray(body.contents)
      ? body.contents
      : [];
  for (const message of list) {
    if (!isRecord(message)) continue;
    const text = partsText(message.content ?? message.parts);
    messages.push(text);
    if (message.role === "user") lastUser = text;
  }
  return { messages, lastUser };
}

/** The model a request names, where its body names one. */
export function requestedModel(body: unknown): string | undefined {
  return isRecord(body) && typeof body.model === "string" && body.model ? body.model : undefined;
}

/** Text of a content value: a string, or a list of parts with `text`. */
function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      typeof part === "string" ? part : isRecord(part) && typeof part.text === "string" ? part.text : "",
    )
    .filter((text) => text !== "")
    .join("\n");
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
