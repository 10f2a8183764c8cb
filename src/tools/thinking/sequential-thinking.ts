import { InvalidArgumentError, LimitExceededError } from "../../util/errors.js";

/** One call of `sequential_thinking`, with the tool's parameter names. */
export interface ThoughtInput {
  readonly thought: string;
  readonly thought_number: number;
  readonly total_thoughts: number;
  /** Default: true while thought_number is below total_thoughts, or needs_more_thoughts is true. */
  readonly next_thought_needed?: boolean;
  readonly is_revision?: boolean;
  readonly revises_thought?: number;
  readonly branch_from_thought?: number;
  readonly branch_id?: string;
  readonly needs_more_thoughts?: boolean;
}

/** A thought as recorded. */
export interface RecordedThought {
  readonly thought: string;
  readonly thoughtNumber: number;
  readonly totalThoughts: number;
  readonly nextThoughtNeeded: boolean;
  readonly isRevision: boolean;
  readonly revisesThought?: number;
  readonly branchFromThought?: number;
  readonly branchId?: string;
  readonly needsMoreThoughts?: boolean;
}

/** What the tool returns, shaped like the reference sequential-thinking server's reply. */
export interface ThinkingSummary {
  readonly thoughtNumber: number;
  readonly totalThoughts: number;
  readonly nextThoughtNeeded: boolean;
  readonly branches: string[];
  readonly thoughtHistoryLength: number;
}

/** Bounds on one session's thinking; defaults 1,000 thoughts kept, 50,000 characters each, 100 branches. */
export interface ThinkingLimits {
  readonly maxThoughts?: number;
  readonly maxThoughtChars?: number;
  readonly maxBranches?: number;
}

const MAX_THOUGHT_NUMBER = 1_000_000;
const MAX_BRANCH_ID_CHARS = 100;

/**
 * The thought history of one session: validates each thought against what came before, keeps
 * the main line and named branches, and answers with a summary. The oldest thoughts are dropped
 * past `maxThoughts`. Holds values only; no I/O.
 */
export class SequentialThinking {
  private readonly thoughts: RecordedThought[] = [];
  private readonly branches = new Map<string, RecordedThought[]>();
  private readonly maxThoughts: number;
  private readonly maxThoughtChars: number;
  private readonly maxBranches: number;

  constructor(limits: ThinkingLimits = {}) {
    this.maxThoughts = limits.maxThoughts ?? 1_000;
    this.maxThoughtChars = limits.maxThoughtChars ?? 50_000;
    this.maxBranches = limits.maxBranches ?? 100;
  }

  /** Validates and records one thought; throws InvalidArgumentError naming the field at fault. */
  record(input: ThoughtInput): ThinkingSummary {
    const thought = this.validate(input);
    this.thoughts.push(thought);
    if (this.thoughts.length > this.maxThoughts) this.thoughts.shift();
    if (thought.branchId !== undefined) {
      const branch = this.branches.get(thought.branchId) ?? [];
      branch.push(thought);
      if (branch.length > this.maxThoughts) branch.shift();
      this.branches.set(thought.branchId, branch);
    }
    return this.summary(thought);
  }

  /** The thoughts kept, oldest first, across the main line and every branch. */
  get history(): readonly RecordedThought[] {
    return this.thoughts;
  }

  /** The thoughts of one branch, oldest first (empty for an unknown id). */
  branch(branchId: string): readonly RecordedThought[] {
    return this.branches.get(branchId) ?? [];
  }

  /** The ids of the branches started so far, in the order they were started. */
  get branchIds(): string[] {
    return [...this.branches.keys()];
  }

  private summary(thought: RecordedThought): ThinkingSummary {
    return {
      thoughtNumber: thought.thoughtNumber,
      totalThoughts: thought.totalThoughts,
      nextThoughtNeeded: thought.nextThoughtNeeded,
      branches: this.branchIds,
      thoughtHistoryLength: this.thoughts.length,
    };
  }

  private validate(input: ThoughtInput): RecordedThought {
    const { thought, thought_number: number, total_thoughts: total } = input;
    if (typeof thought !== "string" || thought.trim().length === 0) {
      throw new InvalidArgumentError("thought", "is empty; write out the reasoning step you want to record");
    }
    if (thought.length > this.maxThoughtChars) {
      throw new InvalidArgumentError(
        "thought",
        `is ${thought.length} characters, over the ${this.maxThoughtChars} limit; split it into several thoughts`,
      );
    }
    wholeNumber("thought_number", number, MAX_THOUGHT_NUMBER);
    wholeNumber("total_thoughts", total, MAX_THOUGHT_NUMBER);
    const next = input.next_thought_needed ?? (input.needs_more_thoughts === true || number < total);
    if (typeof next !== "boolean") {
      throw new InvalidArgumentError(
        "next_thought_needed",
        "must be true (more thinking to do) or false (done), or left out",
      );
    }

    const revises = input.revises_thought;
    if (input.is_revision === true && revises === undefined) {
      throw new InvalidArgumentError(
        "revises_thought",
        "is required when is_revision is true: give the number of the thought this one revises",
      );
    }
    if (revises !== undefined) {
      if (input.is_revision === false) {
        throw new InvalidArgumentError(
          "is_revision",
          "is false but revises_thought is set; set is_revision to true, or drop revises_thought",
        );
      }
      this.earlierThought("revises_thought", revises, number);
    }

    const from = input.branch_from_thought;
    const branchId = input.branch_id;
    if (from !== undefined && branchId === undefined) {
      throw new InvalidArgumentError(
        "branch_id",
        'is required with branch_from_thought: name the new branch, e.g. "alternative-a"',
      );
    }
    if (branchId !== undefined) {
      if (
        typeof branchId !== "string" ||
        branchId.trim().length === 0 ||
        branchId.length > MAX_BRANCH_ID_CHARS ||
        /\p{Cc}/u.test(branchId)
      ) {
        throw new InvalidArgumentError(
          "branch_id",
          `must be a name of 1 to ${MAX_BRANCH_ID_CHARS} printable characters`,
        );
      }
      const known = this.branches.has(branchId);
      if (from === undefined && !known) {
        throw new InvalidArgumentError(
          "branch_from_thought",
          `is required to start branch ${JSON.stringify(branchId)}: give the number of the thought it branches from`,
        );
      }
      if (!known && this.branches.size >= this.maxBranches) {
        throw new LimitExceededError(
          `this session already has ${this.maxBranches} thinking branches; continue one of them instead of starting another`,
        );
      }
      if (from !== undefined) this.earlierThought("branch_from_thought", from, number);
    }

    return {
      thought,
      thoughtNumber: number,
      // The estimate grows when the thinking runs past it, as in the reference server.
      totalThoughts: Math.max(total, number),
      nextThoughtNeeded: next,
      isRevision: revises !== undefined,
      ...(revises !== undefined ? { revisesThought: revises } : {}),
      ...(from !== undefined ? { branchFromThought: from } : {}),
      ...(branchId !== undefined ? { branchId } : {}),
      ...(input.needs_more_thoughts !== undefined ? { needsMoreThoughts: input.needs_more_thoughts } : {}),
    };
  }

  /** Checks that `field` names a thought before `current` that is still in the history. */
  private earlierThought(field: string, value: number, current: number): void {
    wholeNumber(field, value, MAX_THOUGHT_NUMBER);
    if (value >= current) {
      throw new InvalidArgumentError(
        field,
        `${value} is not an earlier thought: it must be less than thought_number ${current}`,
      );
    }
    if (!this.thoughts.some((t) => t.thoughtNumber === value)) {
      const numbers = [...new Set(this.thoughts.map((t) => t.thoughtNumber))].sort((a, b) => a - b);
      const known =
        numbers.length === 0
          ? "none yet"
          : numbers.length > 20
            ? `${numbers.slice(0, 20).join(", ")}, ...`
            : numbers.join(", ");
      throw new InvalidArgumentError(field, `${value} refers to no recorded thought (recorded: ${known})`);
    }
  }
}

function wholeNumber(field: string, value: unknown, max: number): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidArgumentError(field, `must be a whole number from 1 to ${max}`);
  }
}
