/**
 * The script of report.html, read from its own file (html-report.browser.js, plain browser
 * JavaScript with its own lint) once, when this module loads: html-report.ts inlines it in the
 * page, which stays one self-contained file. The file sits in src/ and is shipped there (package.json
 * `files`), so this finds it from src/ (tests) and from dist/ (the build) alike.
 */
import { readFileSync } from "node:fs";

function readReportScript(): string {
  const text = readFileSync(new URL("../../src/eval/html-report.browser.js", import.meta.url), "utf8");
  // Inside a <script> element, "</script" would end it early (and what follows would be HTML).
  if (/<\/script/i.test(text)) throw new Error("html-report.browser.js must not contain </script");
  return text;
}

export const REPORT_SCRIPT = readReportScript();
