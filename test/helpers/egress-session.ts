/**
 * A describe block's session with `--egress pypi`, made before its tests and removed after them,
 * with every drydock log record written meanwhile: `const box = egressSessionForSuite("text")`,
 * then `box.session` and `box.logs` in the tests.
 */
import { afterAll, beforeAll } from "vitest";
import { parseEgressFlag } from "../../src/gateway/egress-allowlist.js";
import type { Session } from "../../src/session/session.js";
import { addLogSink, type LogRecord } from "../../src/util/log.js";
import { tempRepo, type TempRepo } from "./repos.js";
import { testSession } from "./sessions.js";

export interface EgressSuiteSession {
  /** Set once the suite's beforeAll has run. */
  session: Session;
  logs: LogRecord[];
}

export function egressSessionForSuite(readme: string): EgressSuiteSession {
  const holder = { logs: [] as LogRecord[] } as EgressSuiteSession;
  let repo: TempRepo | undefined;
  let removeSink: (() => void) | undefined;
  beforeAll(async () => {
    removeSink = addLogSink((record) => holder.logs.push(record));
    repo = tempRepo({ "README.md": readme });
    holder.session = await testSession(repo.path, { egress: parseEgressFlag("pypi") });
  });
  afterAll(async () => {
    removeSink?.();
    await holder.session?.destroy();
    repo?.[Symbol.dispose]();
  });
  return holder;
}
