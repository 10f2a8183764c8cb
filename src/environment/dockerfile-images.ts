/**
 * The images a Dockerfile would read: each FROM, each `COPY --from=` and each `RUN --mount=...
 * from=` that names an image rather than an earlier stage, after build-arg substitution. Pure.
 *
 * Hand-written rather than a parser from npm (dockerfile-ast, for one, is a language-server
 * library that leaves build-arg substitution to its caller): the check needs to see at least what
 * the engine's builder would treat as an image reference, and to refuse whatever it cannot read
 * plainly. So every line is read as an instruction the way the classic builder the engine runs
 * reads it (continuations joined, comments dropped, no heredocs), ONBUILD's instruction is checked
 * too (it runs in the build of an image made from this one), and a reference that still holds
 * anything but the characters of an image name after substitution (`$`, quotes, escapes, spaces)
 * is an error rather than a guess.
 */

export interface DockerfileImage {
  /** The image reference, substituted. */
  ref: string;
  /** 1-based line of the instruction. */
  line: number;
  /** "FROM", "COPY --from", "RUN --mount from", "ONBUILD ..." */
  via: string;
}

/** A reference that cannot be resolved to one image name. */
export interface DockerfileProblem {
  line: number;
  problem: string;
}

export interface DockerfileImages {
  images: DockerfileImage[];
  problems: DockerfileProblem[];
}

/** The characters of an image reference: name, optional tag, optional digest. */
const IMAGE_REF = /^[a-z0-9][a-z0-9._\-/:@]*$/i;

interface Instruction {
  line: number;
  keyword: string;
  rest: string;
}

/** Joins continuation lines and drops comments and blank lines, as the builder does. */
function instructions(text: string): Instruction[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let escape = "\\";
  // Parser directives: `# name=value` lines at the very top, before anything else.
  for (const line of lines) {
    const directive = /^#\s*([a-zA-Z]+)\s*=\s*(\S*)\s*$/.exec(line);
    if (!directive) break;
    if (directive[1]!.toLowerCase() === "escape" && (directive[2] === "`" || directive[2] === "\\"))
      escape = directive[2];
  }
  const out: Instruction[] = [];
  let pending: { line: number; text: string } | undefined;
  lines.forEach((raw, i) => {
    const trimmed = raw.trim();
    if (pending && (trimmed === "" || trimmed.startsWith("#"))) return;
    if (!pending && (trimmed === "" || trimmed.startsWith("#"))) return;
    const continues = trimmed.endsWith(escape);
    const body = continues ? trimmed.slice(0, -1) : trimmed;
    if (pending) pending.text += ` ${body}`;
    else pending = { line: i + 1, text: body };
    if (!continues) {
      const [keyword = "", ...rest] = pending.text.trim().split(/\s+/);
      out.push({ line: pending.line, keyword: keyword.toUpperCase(), rest: rest.join(" ") });
      pending = undefined;
    }
  });
  if (pending) {
    const [keyword = "", ...rest] = pending.text.trim().split(/\s+/);
    out.push({ line: pending.line, keyword: keyword.toUpperCase(), rest: rest.join(" ") });
  }
  return out;
}

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

/** Leading `--name=value` flags of an instruction, and what follows them. */
function flags(rest: string): { flags: Array<[string, string]>; args: string[] } {
  const words = rest.split(/\s+/).filter(Boolean);
  const found: Array<[string, string]> = [];
  while (words[0]?.startsWith("--")) {
    const word = words.shift()!;
    const eq = word.indexOf("=");
    found.push(
      eq < 0 ? [word.slice(2).toLowerCase(), ""] : [word.slice(2, eq).toLowerCase(), word.slice(eq + 1)],
    );
  }
  return { flags: found, args: words };
}

/**
 * Every image a Dockerfile reads, with `buildArgs` (the build's `--build-arg`s) applied to the
 * ARGs it declares; references that cannot be resolved are problems, never dropped.
 */
export function dockerfileImages(text: string, buildArgs: Record<string, string>): DockerfileImages {
  const images: DockerfileImage[] = [];
  const problems: DockerfileProblem[] = [];
  const stages: string[] = [];
  /** ARGs before the first FROM: the only ones FROM may use. */
  const globalArgs = new Map<string, string>();
  /** ARGs (and ENVs) in scope within the current stage. */
  let stageVars = new Map<string, string>();
  let seenFrom = false;

  const declare = (rest: string, into: Map<string, string>, scope: Map<string, string>) => {
    for (const word of rest.split(/\s+/).filter(Boolean)) {
      const eq = word.indexOf("=");
      const name = eq < 0 ? word : word.slice(0, eq);
      const fallback = eq < 0 ? undefined : substitute(word.slice(eq + 1), scope);
      const value = Object.hasOwn(buildArgs, name) ? buildArgs[name]! : (fallback ?? scope.get(name));
      if (value !== undefined) into.set(name, value);
    }
  };

  /** `earlier`: the stages a reference may name (those before the current one). */
  const imageOrStage = (
    raw: string,
    line: number,
    via: string,
    vars: Map<string, string>,
    earlier: string[],
  ) => {
    const ref = substitute(raw, vars);
    if (!IMAGE_REF.test(ref)) {
      problems.push({ line, problem: `${via} ${JSON.stringify(raw)} does not resolve to one image name` });
      return;
    }
    const lower = ref.toLowerCase();
    if (earlier.includes(lower)) return;
    if (/^\d+$/.test(ref) && Number(ref) < earlier.length) return;
    if (lower === "scratch" && via === "FROM") return;
    images.push({ ref, line, via });
  };

  const check = (ins: Instruction, prefix: string, vars: Map<string, string>, earlier: string[]) => {
    const via = (what: string) => `${prefix}${what}`;
    const { flags: given, args } = flags(ins.rest);
    if (ins.keyword === "COPY" || ins.keyword === "ADD") {
      for (const [name, value] of given)
        if (name === "from") imageOrStage(value, ins.line, via(`${ins.keyword} --from`), vars, earlier);
    }
    if (ins.keyword === "RUN") {
      for (const [name, value] of given) {
        if (name !== "mount") continue;
        for (const option of value.split(",")) {
          const [key, ...v] = option.split("=");
          if (key?.trim().toLowerCase() === "from")
            imageOrStage(v.join("="), ins.line, via("RUN --mount from"), vars, earlier);
        }
      }
    }
    return args;
  };

  for (const ins of instructions(text)) {
    if (ins.keyword === "ARG") {
      declare(
        ins.rest,
        seenFrom ? stageVars : globalArgs,
        seenFrom ? new Map([...globalArgs, ...stageVars]) : globalArgs,
      );
      continue;
    }
    if (ins.keyword === "FROM") {
      seenFrom = true;
      const { args } = flags(ins.rest);
      const [image, as, name] = args;
      if (image === undefined) problems.push({ line: ins.line, problem: "FROM names no image" });
      else imageOrStage(image, ins.line, "FROM", globalArgs, stages);
      stages.push(as?.toLowerCase() === "as" && name ? name.toLowerCase() : `\0${stages.length}`);
      stageVars = new Map();
      continue;
    }
    if (ins.keyword === "ENV") {
      // ENV's forms are many (`K V`, `K=V ...`, quotes); a reference made from one is refused below.
      continue;
    }
    if (ins.keyword === "ONBUILD") {
      const inner = instructions(ins.rest)[0];
      if (!inner) continue;
      inner.line = ins.line;
      if (inner.keyword === "FROM" || inner.keyword === "ONBUILD") {
        problems.push({ line: ins.line, problem: `ONBUILD ${inner.keyword} is not allowed` });
        continue;
      }
      // The trigger runs in another build, where this file's stages and ARGs mean nothing.
      check(inner, "ONBUILD ", new Map(), []);
      continue;
    }
    check(ins, "", stageVars, stages.slice(0, -1));
  }
  return { images, problems };
}
