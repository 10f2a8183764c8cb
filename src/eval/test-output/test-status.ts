/** What a test runner said about each test, by name. */
export type TestStatus = "passed" | "failed" | "skipped";

/**
 * Test name → status. A name reported twice keeps "failed" over anything else. A test known by
 * several names (unittest's two styles) counts once in `size`: its other names are aliases.
 */
export class TestStatuses {
  readonly byName = new Map<string, TestStatus>();
  /** Names that are another name's alias (not counted as tests of their own). */
  private readonly aliases = new Set<string>();

  /** Records a test under `name` and, as aliases of it, `aliases`. */
  set(name: string, status: TestStatus, aliases: string[] = []): void {
    for (const alias of aliases) {
      const key = normalizeTestName(alias);
      if (key === "" || key === normalizeTestName(name)) continue;
      if (!this.byName.has(key)) this.aliases.add(key);
      this.put(key, status);
    }
    this.put(normalizeTestName(name), status);
  }

  private put(key: string, status: TestStatus): void {
    if (key === "") return;
    const before = this.byName.get(key);
    if (before === "failed") return;
    if (before === "passed" && status === "skipped") return;
    this.byName.set(key, status);
  }

  /** Adds every name of another result (its statuses merged by the same rule). */
  merge(other: TestStatuses): this {
    for (const [name, status] of other.byName) {
      if (other.aliases.has(name) && !this.byName.has(name)) this.aliases.add(name);
      this.put(name, status);
    }
    return this;
  }

  get(name: string): TestStatus | undefined {
    return this.byName.get(normalizeTestName(name));
  }

  /** How many tests (each counted once, whatever its names). */
  get size(): number {
    return this.byName.size - this.aliases.size;
  }
}

/** Names compare with runs of whitespace as one space and no spaces at the ends. */
export function normalizeTestName(name: string): string {
  return name.replace(/\s+/g, " ").trim();
}
