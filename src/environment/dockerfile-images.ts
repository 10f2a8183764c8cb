/**
 * The images a Dockerfile would read: each FROM and each `COPY --from=` that names an image
 * rather than an earlier stage, after build-arg substitution. Pure.
 *
 * The file is read by dockerfile-reader.ts, which refuses what it cannot read exactly (directives,
 * control characters, heredocs, ONBUILD, unknown instructions and flags). Each reference is
 * substituted here (`$NAME`, `${NAME}`, `${NAME:-word}`, `${NAME:+word}`) and must then be one
 * image name: anything else (`$`, quotes, escapes, spaces left) is a problem, never a guess. The
 * result names each reference's meaning (an image, an earlier stage by number, scratch), which
 * dockerfile-writer.ts writes literally, so the builder substitutes nothing in a reference.
 */
import { readDockerfile, type DockerfileInstruction, type DockerfileProblem } from "./dockerfile-reader.js";

export type { DockerfileProblem } from "./dockerfile-reader.js";

export interface DockerfileImage {
  /** The image reference, substituted. */
  ref: string;
  /** 1-based line of the instruction. */
  line: number;
  /** "FROM", "COPY --from" */
  via: string;
}

/** What a FROM or a `--from=` means once substituted. */
export type ImageSource = { image: string } | { stage: number } | { scratch: true };

/** An instruction with its references resolved; what dockerfile-writer.ts writes. */
export interface ResolvedInstruction extends DockerfileInstruction {
  /** FROM: what it builds on, and the stage's name (lower case) when it has one. */
  from?: { source: ImageSource; name?: string };
  /** COPY: what `--from=` names. */
  copyFrom?: ImageSource;
}

export interface DockerfileImages {
  images: DockerfileImage[];
  problems: DockerfileProblem[];
  instructions: ResolvedInstruction[];
}

/** The characters of an image reference: name, optional tag, optional digest. */
const IMAGE_REF = /^[a-z0-9][a-z0-9._\-/:@]*$/i;
/** The builder's rule for a stage name. */
const STAGE_NAME = /^[a-z][a-z0-9_.-]*$/;

/** `$NAME`, `${NAME}`, `${NAME:-word}`, `${NAME:+word}`; other forms are left as written. */
function substitute(text: string, vars: Map<string, string>): string {
  return text.replace(
    /\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}$]*))?\})/g,
    (whole, bare: string | undefined, name: string | undefined, op: string | undefined, word: string) => {
      const key = (bare ?? name)!;
      if (!vars.has(key)) return whole;
      const value = vars.get(key)!;
      if (op === "-") return value === "" ? word : value;
      if (op === "+") return value === "" ? "" : word;
      return value;
    },
  );
}

/**
 * Every image a Dockerfile reads, with `buildArgs` (the build's `--build-arg`s) applied to the
 * ARGs it declares; what cannot be read or resolved is a problem, never dropped.
 */
export function dockerfileImages(text: string, buildArgs: Record<string, string>): DockerfileImages {
  const reading = readDockerfile(text);
  const images: DockerfileImage[] = [];
  const problems: DockerfileProblem[] = [...reading.problems];
  const instructions: ResolvedInstruction[] = [];
  /** Stage names (lower case) by number; unnamed stages have none. */
  const stages: Array<string | undefined> = [];
  /** ARGs before the first FROM: the only ones FROM may use. */
  const globalArgs = new Map<string, string>();
  /** ARGs in scope within the current stage. */
  let stageVars = new Map<string, string>();
  let seenFrom = false;

  const declare = (rest: string, into: Map<string, string>, scope: Map<string, string>) => {
    for (const word of rest.split(/[ \t]+/).filter(Boolean)) {
      const eq = word.indexOf("=");
      const name = eq < 0 ? word : word.slice(0, eq);
      const fallback = eq < 0 ? undefined : substitute(word.slice(eq + 1), scope);
      const value = Object.hasOwn(buildArgs, name) ? buildArgs[name]! : (fallback ?? scope.get(name));
      if (value !== undefined) into.set(name, value);
    }
  };

  /** `earlier`: the number of stages a reference may name (those before the current one). */
  const resolve = (
    raw: string,
    line: number,
    via: string,
    vars: Map<string, string>,
    earlier: number,
  ): ImageSource | undefined => {
    const ref = substitute(raw, vars);
    if (!IMAGE_REF.test(ref)) {
      problems.push({ line, problem: `${via} ${JSON.stringify(raw)} does not resolve to one image name` });
      return undefined;
    }
    const lower = ref.toLowerCase();
    const named = stages.slice(0, earlier).indexOf(lower);
    if (named >= 0) return { stage: named };
    if (via !== "FROM" && /^\d+$/.test(ref) && Number(ref) < earlier) return { stage: Number(ref) };
    if (lower === "scratch" && via === "FROM") return { scratch: true };
    images.push({ ref, line, via });
    return { image: ref };
  };

  for (const ins of reading.instructions) {
    if (ins.keyword === "ARG") {
      declare(
        ins.args,
        seenFrom ? stageVars : globalArgs,
        seenFrom ? new Map([...globalArgs, ...stageVars]) : globalArgs,
      );
      instructions.push(ins);
      continue;
    }
    if (ins.keyword === "FROM") {
      seenFrom = true;
      const words = ins.args.split(/[ \t]+/).filter(Boolean);
      const [image, as, name] = words;
      const named = words.length === 3 && as!.toLowerCase() === "as";
      if (image === undefined || (words.length !== 1 && !named)) {
        problems.push({
          line: ins.line,
          problem: image === undefined ? "FROM names no image" : "FROM takes an image and optionally AS name",
        });
        stages.push(undefined);
        continue;
      }
      const stageName = named ? name!.toLowerCase() : undefined;
      if (stageName !== undefined && !STAGE_NAME.test(stageName)) {
        problems.push({
          line: ins.line,
          problem: `the stage name ${JSON.stringify(name)} is not one the builder accepts`,
          fix: "name stages with a letter, then letters, digits, -, _ or .",
        });
      }
      const source = resolve(image, ins.line, "FROM", globalArgs, stages.length);
      stages.push(stageName);
      stageVars = new Map();
      if (source) instructions.push({ ...ins, from: { source, ...(stageName ? { name: stageName } : {}) } });
      continue;
    }
    if (!seenFrom) {
      problems.push({ line: ins.line, problem: `${ins.keyword} comes before the first FROM` });
      continue;
    }
    const fromFlag = ins.flags.find((f) => f.name === "from");
    if (fromFlag) {
      const source = resolve(fromFlag.value, ins.line, `${ins.keyword} --from`, stageVars, stages.length - 1);
      if (source) instructions.push({ ...ins, copyFrom: source });
      continue;
    }
    instructions.push(ins);
  }
  return { images, problems, instructions };
}
