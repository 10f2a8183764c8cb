/**
 * Named sets of hosts an operator can allow with one word (`--egress pypi`): the hosts a package
 * manager needs to fetch packages over HTTPS, and nothing else.
 */
export const EGRESS_SETS: Readonly<Record<string, readonly string[]>> = {
  /** pip: the index and the files it links to. */
  pypi: ["pypi.org", "files.pythonhosted.org"],
  /** npm, yarn, pnpm: metadata and tarballs come from the registry itself. */
  npm: ["registry.npmjs.org"],
  /** The Debian archive and its security updates. */
  debian: ["deb.debian.org", "security.debian.org"],
  /** cargo: the sparse index and the crate files. */
  crates: ["crates.io", "index.crates.io", "static.crates.io"],
  /** go: the module mirror and the checksum database. */
  go: ["proxy.golang.org", "sum.golang.org"],
  /** git over HTTPS, the API, archives, release assets and raw files. */
  github: [
    "github.com",
    "api.github.com",
    "codeload.github.com",
    "objects.githubusercontent.com",
    "raw.githubusercontent.com",
  ],
};

export const EGRESS_SET_NAMES = Object.keys(EGRESS_SETS);
