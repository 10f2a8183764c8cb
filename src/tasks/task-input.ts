import { InvalidArgumentError, LimitExceededError } from "../util/errors.js";
import { maxTitleChars } from "./task.js";

/** Trims a title and checks it is one non-empty line of at most 256 code points; returns it trimmed. */
export function checkTitle(title: string): string {
  const trimmed = title.trim();
  if (trimmed === "") {
    throw new InvalidArgumentError("title", "must not be empty; give a short description of the task");
  }
  if (/[\r\n]/.test(trimmed)) {
    throw new InvalidArgumentError("title", "must be a single line; put details in body");
  }
  const length = Array.from(trimmed).length;
  if (length > maxTitleChars) {
    throw new InvalidArgumentError(
      "title",
      `is ${length} characters, the limit is ${maxTitleChars}; shorten it and put details in body`,
    );
  }
  return trimmed;
}

/** Checks a body against the stack's size cap; the body is kept exactly as given. */
export function checkBody(body: string, maxBodyChars: number): string {
  if (body.length > maxBodyChars) {
    throw new LimitExceededError(
      `body: is ${body.length} characters, the limit is ${maxBodyChars}; keep the essentials in the task and the rest in files in the workspace`,
    );
  }
  return body;
}
