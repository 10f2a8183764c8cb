import type { IncomingMessage, ServerResponse } from "node:http";

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

/** Writes a chunk, waiting while the client is slow, and failing once it has gone. */
export function writeChunk(response: ServerResponse, chunk: Buffer | string): Promise<void> {
  if (response.destroyed) return Promise.reject(new Error("client went away"));
  if (response.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onDrain = () => {
      response.off("close", onClose);
      resolve();
    };
    const onClose = () => {
      response.off("drain", onDrain);
      reject(new Error("client went away"));
    };
    response.once("drain", onDrain);
    response.once("close", onClose);
  });
}
