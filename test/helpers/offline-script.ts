import { writeFileSync } from "node:fs";

/**
 * Writes an offline model script with one rule: a prompt that says "zebra" gets an edit of
 * README.md from "hello" to "hello from the zebra script". Returns the path.
 */
export function writeZebraScript(path: string): string {
  const reply = [
    "README.md",
    "```",
    "<<<<<<< SEARCH",
    "hello",
    "=======",
    "hello from the zebra script",
    ">>>>>>> REPLACE",
    "```",
    "",
  ];
  writeFileSync(path, JSON.stringify([{ name: "zebra", match: "zebra", reply }]));
  return path;
}
