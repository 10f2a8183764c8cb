/**
 * code_search: definitions of functions, classes and methods, found by universal-ctags in the box
 * over the files that mention the name, with their bodies read in the box when asked.
 */
import { z } from "zod";
import type { Session } from "../session/session.js";
import { resolveWorkspacePath } from "../sandbox/workspace-path.js";
import { CommandExitError, NotFoundError, PathOutsideWorkspaceError } from "../util/errors.js";
import { EXIT, RESOLVE } from "./box-file-scripts.js";
import { boxSh } from "../sandbox/box-channel.js";
import { readFiles } from "./box-files.js";
import { ctagsForIdentifierCommand } from "./search/ctags-command.js";
import { type Definition, parseCtagsJson } from "./search/ctags-json.js";
import { extractBody } from "./search/extract-body.js";
import { findDefinitions, type SearchCommand } from "./search/find-definitions.js";
import { decodeTextFile } from "./edit/text-file.js";
import { parseArgs } from "./parse-args.js";
import { textFirst } from "./reply-text.js";
import { defineTool } from "./tool.js";
import { sessionIdInput } from "./session-id-input.js";
import { boxScript } from "../util/box-script.js";

/** Most definitions listed; bodies are read for the first MAX_BODIES of them. */
export const CODE_SEARCH_MAX_RESULTS = 50;
export const CODE_SEARCH_MAX_BODIES = 20;
/** Cap on ctags output read back (16 MiB) and on the bodies returned in all (256 KiB). */
const CTAGS_MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
const BODIES_MAX_CHARS = 256 * 1024;
/** Files bigger than this are not read for bodies (4 MiB). */
const BODY_FILE_MAX_BYTES = 4 * 1024 * 1024;

// $1 is the search root; checks it, then runs the rest of the arguments (the ctags pipeline).
const GUARD_SCRIPT = RESOLVE + boxScript("tools/code-search-guard.sh", { MISSING: EXIT.MISSING });

const codeSearchInput = {
  command: z
    .enum(["search_function", "search_class", "search_class_method"])
    .describe(
      "search_function: functions that are not methods; search_class: classes, structs, interfaces, traits, enums; search_class_method: methods (method or Class.method).",
    ),
  identifier: z
    .string()
    .describe("The exact name (case-sensitive): parseConfig, UserService, UserService.save, geo::Circle."),
  path: z.string().optional().describe("Directory or file to search, under /workspace (default /workspace)."),
  print_body: z
    .boolean()
    .optional()
    .describe(
      `Include each definition's source (up to 200 lines each, first ${CODE_SEARCH_MAX_BODIES} results).`,
    ),
  session_id: sessionIdInput,
};

const matchOutput = z.object({
  name: z.string(),
  kind: z.string().describe("ctags kind: function, method, class, struct, ..."),
  path: z.string(),
  line: z.number().int(),
  end_line: z.number().int().optional(),
  scope: z.string().optional().describe("The enclosing class, namespace or module."),
  language: z.string(),
  signature: z.string().optional(),
  body: z.string().optional(),
  body_truncated: z.boolean().optional(),
});
type MatchOutput = z.infer<typeof matchOutput>;

export const codeSearchTool = defineTool({
  name: "code_search",
  // The matches are in output as text; their structured form is for programs.
  replyText: textFirst("output", ["matches"]),
  title: "Find definitions of functions, classes and methods",
  description: [
    "Finds where functions, classes or methods named identifier are defined in the session's /workspace (universal-ctags: TypeScript, JavaScript, Python, Go, Rust, Java, C, C++ and more).",
    "Use it to jump to a definition; use bash (grep -rn) for usages.",
    `Returns file, line, kind, scope and signature of each match (at most ${CODE_SEARCH_MAX_RESULTS}), with print_body its source.`,
    "When nothing matches, the hint says what the name is instead. node_modules, .git, virtualenvs and minified files are skipped.",
  ].join(" "),
  inputSchema: codeSearchInput,
  outputSchema: {
    output: z.string().describe("The matches as text, for reading."),
    matches: z.array(matchOutput),
    total: z.number().int().describe("Matches found before the list was cut."),
    hint: z.string().optional().describe("When nothing matched: what was found instead, or what to try."),
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(input, ctx) {
    const args = parseArgs(codeSearchInput, input, "code_search");
    const command: SearchCommand = args.command;
    findDefinitions([], command, args.identifier); // checks the identifier before any work in the box
    const root = resolveWorkspacePath(args.path ?? "/workspace", "path");
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    const definitions = await indexFor(session, root, args.identifier, args.path ?? root, ctx.signal);
    const found = findDefinitions(definitions, command, args.identifier, {
      maxResults: CODE_SEARCH_MAX_RESULTS,
    });
    const matches: MatchOutput[] = found.matches.map(toOutput);
    if (args.print_body === true) await addBodies(session, found.matches, matches, ctx.signal);
    return {
      output: render(matches, found.total, command, args.identifier, found.hint),
      matches,
      total: found.total,
      ...(found.hint !== undefined ? { hint: found.hint } : {}),
    };
  },
});

async function indexFor(
  session: Session,
  root: string,
  identifier: string,
  shownPath: string,
  signal: AbortSignal,
): Promise<Definition[]> {
  const argv = ctagsForIdentifierCommand(root, identifier);
  const result = await boxSh(session.box, GUARD_SCRIPT, [root, ...argv], {
    timeoutMs: session.commandTimeoutMs,
    maxOutputBytes: CTAGS_MAX_OUTPUT_BYTES,
    signal,
  });
  const detail = result.stderr.toString("utf8").trim();
  if (result.exitCode === EXIT.OUTSIDE) {
    throw new PathOutsideWorkspaceError(shownPath, `it resolves (through a symlink) to ${detail}`);
  }
  if (result.exitCode === EXIT.MISSING) {
    throw new NotFoundError(
      `${shownPath} does not exist in /workspace; search /workspace or a directory in it`,
    );
  }
  if (result.exitCode !== 0) throw new CommandExitError(result.exitCode, detail, "ctags");
  return parseCtagsJson(result.stdout.toString("utf8"));
}

function toOutput(d: Definition): MatchOutput {
  return {
    name: d.name,
    kind: d.kind,
    path: d.path,
    line: d.line,
    ...(d.end !== undefined ? { end_line: d.end } : {}),
    ...(d.scope !== undefined ? { scope: d.scope } : {}),
    language: d.language,
    ...(d.signature !== undefined ? { signature: d.signature } : {}),
  };
}

/** Reads the files of the first matches in one exec and cuts each definition out of its file. */
async function addBodies(
  session: Session,
  definitions: readonly Definition[],
  matches: MatchOutput[],
  signal: AbortSignal,
): Promise<void> {
  const wanted = definitions.slice(0, CODE_SEARCH_MAX_BODIES);
  const paths = [...new Set(wanted.map((d) => d.path))];
  const files = await readFiles(session.box, paths, { maxBytes: BODY_FILE_MAX_BYTES, signal });
  const texts = new Map<string, string>();
  for (const [path, bytes] of files) {
    try {
      texts.set(path, decodeTextFile(bytes, path));
    } catch {
      // A binary or non-UTF-8 file gets no body; the location is still listed.
    }
  }
  let budget = BODIES_MAX_CHARS;
  wanted.forEach((d, i) => {
    const text = texts.get(d.path);
    const match = matches[i];
    if (text === undefined || match === undefined || budget <= 0) return;
    try {
      const body = extractBody(text, d.line, d.end, { maxChars: Math.min(64 * 1024, budget) });
      match.body = body.text;
      match.end_line = body.endLine;
      if (body.truncated) match.body_truncated = true;
      budget -= body.text.length;
    } catch {
      // The file changed since it was indexed; leave the body out.
    }
  });
}

function render(
  matches: readonly MatchOutput[],
  total: number,
  command: SearchCommand,
  identifier: string,
  hint: string | undefined,
): string {
  if (matches.length === 0) return `No match for ${identifier} (${command}). ${hint ?? ""}`.trim();
  const head = `${total} definition${total === 1 ? "" : "s"} for ${identifier} (${command})${total > matches.length ? `, first ${matches.length} shown` : ""}:`;
  const parts = matches.map((m) => {
    const where = `${m.path}:${m.line}${m.end_line !== undefined ? `-${m.end_line}` : ""}`;
    const what = `${m.kind} ${m.scope !== undefined ? `${m.scope}.` : ""}${m.name}${m.signature ?? ""}`;
    const line = `${where}  ${what}  [${m.language}]`;
    if (m.body === undefined) return line;
    return `${line}\n${m.body}${m.body_truncated ? "\n[body cut; view the file with view_range for the rest]" : ""}`;
  });
  const hasBodies = matches.some((m) => m.body !== undefined);
  return [head, ...parts].join(hasBodies ? "\n\n" : "\n");
}
