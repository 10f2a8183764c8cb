/**
 * The Dockerfile the engine's builder gets for a repository's Dockerfile: written by drydock from
 * the instructions it checked, never the repository's text. Pure.
 *
 * Canonical form: LF only, one instruction per line, upper-case keywords, no parser directives,
 * comments or continuations. Every image reference is literal and pinned: a FROM or `--from=`
 * that named an image names the image id drydock checked (`sha256:…`, which no retag can move), a
 * `--from=` that named an earlier stage names it by number, so the builder substitutes nothing in
 * a reference and resolves no name. The text is read back before it is returned and must give
 * exactly the instructions written, or nothing is built.
 */
import { DrydockError } from "../util/errors.js";
import type { ImageSource, ResolvedInstruction } from "./dockerfile-images.js";
import { readDockerfile, withoutContinuation, type DockerfileInstruction } from "./dockerfile-reader.js";

/** A character that could make a builder read a written line as more (or less) than one instruction. */
const UNSAFE_CHARACTER = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ufeff]/;

function sourceText(source: ImageSource, pins: Record<string, string>, line: number): string {
  if ("scratch" in source) return "scratch";
  if ("stage" in source) return String(source.stage);
  const id = pins[source.image];
  if (!id || !/^sha256:[0-9a-f]{64}$/.test(id)) {
    throw new DrydockError(
      "dockerfile_unchecked",
      `line ${line}: the image ${source.image} was not checked (no id for it); nothing was built`,
    );
  }
  return id;
}

/** The instructions as written: references replaced by what they were checked as. */
export function pinnedInstructions(
  instructions: ResolvedInstruction[],
  pins: Record<string, string>,
): DockerfileInstruction[] {
  return instructions.map((ins) => {
    if (ins.from) {
      const { source, name } = ins.from;
      // FROM names an earlier stage by its name: FROM takes no stage number.
      const base = "stage" in source ? stageNameOf(instructions, source.stage) : undefined;
      const text = base ?? sourceText(source, pins, ins.line);
      return { line: ins.line, keyword: "FROM", flags: [], args: name ? `${text} AS ${name}` : text };
    }
    const flags = ins.flags.map((f) => {
      if (f.name !== "from") return f;
      // A --from= is written only as what it was resolved to, never as the text it was read from.
      if (!ins.copyFrom) {
        throw new DrydockError(
          "dockerfile_unchecked",
          `line ${ins.line}: --from=${f.value} was not resolved; nothing was built`,
        );
      }
      return { name: "from", value: sourceText(ins.copyFrom, pins, ins.line) };
    });
    return { line: ins.line, keyword: ins.keyword, flags, args: ins.args };
  });
}

function stageNameOf(instructions: ResolvedInstruction[], stage: number): string {
  const name = instructions.filter((i) => i.keyword === "FROM")[stage]?.from?.name;
  if (!name) throw new DrydockError("dockerfile_unchecked", `stage ${stage} has no name to build on`);
  return name;
}

function lineOf(ins: DockerfileInstruction): string {
  const flags = ins.flags.map((f) => ` --${f.name}=${f.value}`).join("");
  return `${ins.keyword}${flags}${ins.args ? ` ${ins.args}` : ""}`;
}

const same = (a: DockerfileInstruction[], b: DockerfileInstruction[]) =>
  JSON.stringify(a.map(({ keyword, flags, args }) => ({ keyword, flags, args }))) ===
  JSON.stringify(b.map(({ keyword, flags, args }) => ({ keyword, flags, args })));

/**
 * The text the builder gets, from checked instructions and `pins` (each image reference → the id
 * checked for it); throws when anything would be read back differently.
 */
export function writeDockerfile(instructions: ResolvedInstruction[], pins: Record<string, string>): string {
  const written = pinnedInstructions(instructions, pins);
  const lines = written.map(lineOf);
  lines.forEach((line, i) => {
    if (UNSAFE_CHARACTER.test(line) || withoutContinuation(line) !== undefined) {
      throw new DrydockError(
        "dockerfile_unwritable",
        `line ${written[i]!.line}: the instruction cannot be written as one plain line; nothing was built`,
      );
    }
  });
  const text = `${lines.join("\n")}\n`;
  const back = readDockerfile(text);
  if (back.problems.length > 0 || !same(back.instructions, written)) {
    throw new DrydockError(
      "dockerfile_unwritable",
      `the Dockerfile drydock wrote does not read back as the instructions it checked${back.problems[0] ? ` (line ${back.problems[0].line}: ${back.problems[0].problem})` : ""}; nothing was built`,
    );
  }
  return text;
}
