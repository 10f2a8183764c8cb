/**
 * How a client says, in a `tools/call` request's `_meta`, that it reads `structuredContent` only:
 * `{"drydock/reply": "structured"}`. Its successful replies then carry no text block, so what a
 * reply says (a command's output above all) crosses the wire once. A client that says nothing
 * gets the text written for its model beside the object (docs/tools.md, "What a reply carries").
 */
export const REPLY_META_KEY = "drydock/reply";

/** The `_meta` a program that reads only `structuredContent` sends with each call. */
export const STRUCTURED_REPLY_META = { [REPLY_META_KEY]: "structured" } as const;

/** Whether a request's `_meta` asks for the object alone. */
export function readsStructuredOnly(meta: unknown): boolean {
  return (
    typeof meta === "object" &&
    meta !== null &&
    (meta as Record<string, unknown>)[REPLY_META_KEY] === "structured"
  );
}
