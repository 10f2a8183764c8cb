/**
 * The live page's script and style: files of their own (src/server/live/page/), a browser module
 * with JSDoc types checked against the DOM and linted with browser globals, and a stylesheet. They
 * are read from the package as they are (the package ships them; tsc builds only the server), once,
 * and served by the live view.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DrydockError } from "../../util/errors.js";

/** The same folder from src/server/live/ (tests) and from dist/server/live/ (the build, the package). */
const PAGE_DIR = new URL("../../../src/server/live/page/", import.meta.url);

export type LiveAssetName = "live-app.js" | "live-app.css";

const cache = new Map<LiveAssetName, string>();

/** The file's text; throws naming the file when the package lacks it. */
export function liveAsset(name: LiveAssetName): string {
  let text = cache.get(name);
  if (text === undefined) {
    const path = fileURLToPath(new URL(name, PAGE_DIR));
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new DrydockError(
        "live_page_missing",
        `the live page's ${name} is missing at ${path} (${(error as Error).message}): this copy of drydock is incomplete; reinstall it, or rebuild from a full checkout`,
        { cause: error },
      );
    }
    cache.set(name, text);
  }
  return text;
}
