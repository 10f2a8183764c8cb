/** What a test runner said about each test, by name. */
export type TestStatus = "passed" | "failed" | "skipped";

/** Test name → status. A name reported twice keeps "failed" over anything else. */
export class TestStatuses {
  readonly byName = new Map<string, TestStatus>();

  set(name: string, status: TestStatus): void {
    const key = normalizeTestName(name);
    if (key === "") return;
    const before = this.byName.get(key);
    if (before === "failed") return;
    if (before === "passed" && status === "skipped") return;
    this.byName.set(key, status);
  }

  /** Adds every name of another result (its statuses merged by the same rule). */
  merge(other: TestStatuses): this {
    for (const [name, status] of other.byName) this.set(name, status);
    return this;
  }

  get(name: string): TestStatus | undefined {
    return this.byName.get(normalizeTestName(name));
  }

  get size(): number {
    return this.byName.size;
  }
}

/** Names compare with runs of whitespace as one space and no spaces at the ends. */
export function normalizeTestName(name: string): string {
  return name.replace(/\s+/g, " ").trim();
}
