/**
 * The spec's "Complex Problem Solving" scenario as data: each step's call and the whole stack it
 * must leave (the text big picture shows every task, its nesting, status and the focus).
 */
export interface ScenarioStep {
  /** The spec's own words for the step. */
  readonly says: string;
  readonly tool: "create_new_task" | "extend_current_task" | "complete_current_task";
  readonly title?: string;
  /** Title of the current task afterwards; null in zen state. */
  readonly current: string | null;
  readonly outline: readonly string[];
}

const done = (...lines: string[]) => lines;

export const scenarioSteps: readonly ScenarioStep[] = [
  {
    says: 'Create root task: "Design new feature" (current task)',
    tool: "create_new_task",
    title: "Design new feature",
    current: "Design new feature",
    outline: ["[t1] Design new feature (current) <-- YOU ARE HERE"],
  },
  {
    says: 'Create subtask: "Research requirements" (pushes onto stack, becomes current)',
    tool: "create_new_task",
    title: "Research requirements",
    current: "Research requirements",
    outline: ["[t1] Design new feature (pending)", "  [t2] Research requirements (current) <-- YOU ARE HERE"],
  },
  {
    says: 'Create subtask: "Interview users" (pushes onto stack, becomes current)',
    tool: "create_new_task",
    title: "Interview users",
    current: "Interview users",
    outline: [
      "[t1] Design new feature (pending)",
      "  [t2] Research requirements (pending)",
      "    [t3] Interview users (current) <-- YOU ARE HERE",
    ],
  },
  {
    says: 'Extend with: "Analyze competitor solutions" (adds to right, becomes current)',
    tool: "extend_current_task",
    title: "Analyze competitor solutions",
    current: "Analyze competitor solutions",
    outline: [
      "[t1] Design new feature (pending)",
      "  [t2] Research requirements (pending)",
      "    [t3] Interview users (pending)",
      "    [t4] Analyze competitor solutions (current) <-- YOU ARE HERE",
    ],
  },
  {
    says: 'Complete "Analyze competitor solutions" (focus moves left)',
    tool: "complete_current_task",
    current: "Interview users",
    outline: [
      "[t1] Design new feature (pending)",
      "  [t2] Research requirements (pending)",
      "    [t3] Interview users (current) <-- YOU ARE HERE",
      "    [t4] Analyze competitor solutions (completed)",
    ],
  },
  {
    says: 'Complete "Interview users" (stack pops, back to "Research requirements")',
    tool: "complete_current_task",
    current: "Research requirements",
    outline: [
      "[t1] Design new feature (pending)",
      "  [t2] Research requirements (current) <-- YOU ARE HERE",
      "    [t3] Interview users (completed)",
      "    [t4] Analyze competitor solutions (completed)",
    ],
  },
  {
    says: 'Complete "Research requirements" (stack pops, back to "Design new feature")',
    tool: "complete_current_task",
    current: "Design new feature",
    outline: [
      "[t1] Design new feature (current) <-- YOU ARE HERE",
      "  [t2] Research requirements (completed)",
      "    [t3] Interview users (completed)",
      "    [t4] Analyze competitor solutions (completed)",
    ],
  },
  {
    // A step of the top-level task goes under it (docs/task-stack.md, decision 2), not beside it at the top.
    says: 'Extend with: "Create specification" (adds to right, becomes current)',
    tool: "extend_current_task",
    title: "Create specification",
    current: "Create specification",
    outline: [
      "[t1] Design new feature (pending)",
      "  [t2] Research requirements (completed)",
      "    [t3] Interview users (completed)",
      "    [t4] Analyze competitor solutions (completed)",
      "  [t5] Create specification (current) <-- YOU ARE HERE",
    ],
  },
  {
    says: 'Complete "Create Specification" (focus moves left)',
    tool: "complete_current_task",
    current: "Design new feature",
    outline: [
      "[t1] Design new feature (current) <-- YOU ARE HERE",
      "  [t2] Research requirements (completed)",
      "    [t3] Interview users (completed)",
      "    [t4] Analyze competitor solutions (completed)",
      "  [t5] Create specification (completed)",
    ],
  },
  {
    says: 'Complete root task: "Design new feature" (focus goes to "zen" no tasks state)',
    tool: "complete_current_task",
    current: null,
    outline: done(
      "[t1] Design new feature (completed)",
      "  [t2] Research requirements (completed)",
      "    [t3] Interview users (completed)",
      "    [t4] Analyze competitor solutions (completed)",
      "  [t5] Create specification (completed)",
      "(all tasks completed: zen state)",
    ),
  },
];

/** The structure an outline shows, task by task in outline order: parent, depth and status. */
export function structureOf(outline: readonly string[]): Array<{
  id: string;
  parent_id: string | null;
  depth: number;
  status: string;
}> {
  const path: string[] = [];
  return outline
    .filter((line) => line.trimStart().startsWith("["))
    .map((line) => {
      const [, indent, id, status] = /^( *)\[(t\d+)\] .* \((pending|current|completed)\)/.exec(line)!;
      const depth = indent!.length / 2 + 1;
      path.length = depth - 1;
      const parent = path[depth - 2] ?? null;
      path.push(id!);
      return { id: id!, parent_id: parent, depth, status: status! };
    });
}
