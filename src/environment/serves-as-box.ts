/**
 * Whether an image drydock did not make from the sandbox image (one the operator allowed, pulled
 * or loaded) can serve as a box: the requirements probe runs in a throwaway box, and an image
 * that lacks what every session needs is refused naming each thing and how to add it. What only
 * some tools need (aider, code_search, egress relays) is said as a note.
 */
import type { Engine } from "../engine/engine.js";
import { checkImage } from "../sandbox/image-check.js";
import type { RequirementResult } from "../sandbox/image-requirements.js";
import { DrydockError } from "../util/errors.js";

/** An image that lacks what every box needs. */
export class ImageLacksError extends DrydockError {
  override name = "ImageLacksError";
  constructor(
    message: string,
    readonly missing: string[],
  ) {
    super("image_lacks_requirements", message);
  }
}

function lacks(r: RequirementResult): string {
  return `${r.requirement.name} (${r.detail}): ${r.requirement.breaks}; add it with: ${r.requirement.fix}`;
}

/** Throws ImageLacksError naming what `image` (described as `what`) lacks; notes go to onLine. */
export async function checkServesAsBox(
  engine: Engine,
  image: string,
  what: string,
  onLine: (line: string) => void = () => undefined,
): Promise<void> {
  onLine(`checking that ${what} holds what a box needs`);
  const results = await checkImage(engine, image);
  for (const r of results.filter((r) => !r.ok && !r.requirement.essential))
    onLine(`note: ${what} lacks ${lacks(r)}`);
  const missing = results.filter((r) => !r.ok && r.requirement.essential);
  if (missing.length === 0) return;
  throw new ImageLacksError(
    `${what} cannot serve as a box: it lacks ${missing.map((r) => r.requirement.name).join(", ")}\n${missing.map((r) => `  - ${lacks(r)}`).join("\n")}\nadd them in a Dockerfile on that image, or build on the sandbox image (FROM \${DRYDOCK_SANDBOX}); \`drydock doctor --image ${image}\` checks an image`,
    missing.map((r) => r.requirement.name),
  );
}
