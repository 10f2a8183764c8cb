/** The `session_id` argument every session tool takes: one definition, so its text is written once. */
import { z } from "zod";

export const sessionIdInput = z.string().min(1).optional().describe("Omit for your default session.");
