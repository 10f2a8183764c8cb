// The pure half of code_search: the ctags command to run in the box and what to make of its output.
export { ctagsCommand, ctagsForIdentifierCommand, SEARCH_LANGUAGES } from "./ctags-command.js";
export { type Definition, parseCtagsJson } from "./ctags-json.js";
export { type BodyLimits, type DefinitionBody, extractBody } from "./extract-body.js";
export {
  type DefinitionSearch,
  findDefinitions,
  type FindOptions,
  type SearchCommand,
} from "./find-definitions.js";
