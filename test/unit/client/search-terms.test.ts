import { describe, expect, it } from "vitest";
import {
  identifierPartTerms,
  searchTerms,
  splitIdentifier,
  wordTerms,
} from "../../../src/client/search-terms.js";

describe("search terms", () => {
  it("splits camelCase, PascalCase, acronyms, snake_case and digits", () => {
    expect(splitIdentifier("parseHTTPResponse")).toEqual(["parse", "http", "response"]);
    expect(splitIdentifier("SessionStore")).toEqual(["session", "store"]);
    expect(splitIdentifier("XMLParser2")).toEqual(["xml", "parser", "2"]);
    expect(splitIdentifier("max_file_bytes")).toEqual(["max", "file", "bytes"]);
    expect(splitIdentifier("plain")).toEqual(["plain"]);
  });

  it("keeps whole words and adds the parts of compound identifiers", () => {
    expect(searchTerms("src/session-store.ts")).toEqual(["src", "session", "store", "ts"]);
    expect(searchTerms("new SessionStore()")).toEqual(["new", "sessionstore", "session", "store"]);
  });

  it("gives only identifier parts for the identifiers field and whole words for content", () => {
    expect(identifierPartTerms("const userName = getUser()")).toEqual(["user", "name", "get", "user"]);
    expect(wordTerms("const userName = 1")).toEqual(["const", "username", "1"]);
  });
});
