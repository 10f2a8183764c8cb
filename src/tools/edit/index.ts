// The pure operations behind file_editor, str_replace_based_edit_tool and json_editor.
export { createFile, type CreatedFile, type CreateOptions } from "./create-file.js";
export {
  type DirectoryEntry,
  type EntryType,
  formatDirectoryListing,
  listingCommand,
  type ListingOptions,
  parseFindListing,
} from "./directory-listing.js";
export { EditHistory, type EditHistoryLimits, type PreviousContent } from "./edit-history.js";
export { insertAt } from "./insert-at.js";
export {
  jsonAdd,
  type JsonEditResult,
  jsonRemove,
  jsonSet,
  jsonView,
  type JsonViewResult,
} from "./json-edit.js";
export { replaceOnce } from "./replace-once.js";
export { snippetAround } from "./snippet.js";
export type { TextEdit } from "./text-edit.js";
export { assertTextContent, decodeTextFile, encodeTextFile, looksBinary } from "./text-file.js";
export { type FileView, viewFile, type ViewLimits } from "./view-file.js";
