import type { IncomingMessage } from "node:http";

/** Request bodies larger than this are refused: a chat request is far smaller. */
export const MAX_REQUEST_BYTES = 64 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  override name = "BodyTooLargeError";
}

/** Reads a whole request body. */
export async function readBody(request: IncomingMessage, maxBytes = MAX_REQUEST_BYTES): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new BodyTooLargeError(`request body larger than ${maxBytes} bytes`);
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}
