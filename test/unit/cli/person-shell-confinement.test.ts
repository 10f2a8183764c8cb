import { describe, expect, it } from "vitest";
import {
  PERSON_HOME,
  personShellArgv,
  personShellPrelude,
} from "../../../src/cli/person-shell-confinement.js";
import { personShellRc } from "../../../src/cli/person-shell-markers.js";

describe("the person's shell's confinement", () => {
  it("starts bash by absolute path from an empty environment, with no startup file but its rc", () => {
    const argv = personShellArgv("/tmp/.drydock-person.abc/rc", "xterm", "/tmp/.drydock-person.abc/git");
    expect(argv.slice(0, 2)).toEqual(["/usr/bin/env", "-i"]);
    expect(argv.slice(-5)).toEqual([
      "/bin/bash",
      "--noprofile",
      "--rcfile",
      "/tmp/.drydock-person.abc/rc",
      "-i",
    ]);
    const env = Object.fromEntries(
      argv
        .slice(2, -5)
        .map((a) => a.split("="))
        .map(([k, ...v]) => [k, v.join("=")]),
    );
    expect(env).toMatchObject({
      HOME: PERSON_HOME,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_PAGER: "/usr/bin/less",
      GIT_EDITOR: "/usr/bin/vi",
      GIT_DIR: "/tmp/.drydock-person.abc/git",
      GIT_WORK_TREE: "/workspace",
      GIT_INDEX_FILE: "/tmp/.drydock-person.abc/git/index",
      GIT_NO_REPLACE_OBJECTS: "1",
      GIT_GRAFT_FILE: "/dev/null",
    });
    const overrides = Number(env.GIT_CONFIG_COUNT);
    const keys = Array.from(
      { length: overrides },
      (_, i) => `${env[`GIT_CONFIG_KEY_${i}`]}=${env[`GIT_CONFIG_VALUE_${i}`]}`,
    );
    expect(keys).toContain("core.fsmonitor=false");
    expect(keys).toContain("core.hooksPath=/dev/null");
    expect(keys).toContain("diff.ignoreSubmodules=all");
    for (const value of Object.values(env)) expect(value).not.toMatch(/HOME\/|~|\/home\/|\/opt\/venv/);
  });

  it("points git at no repository when the person has no git directory of its own", () => {
    const argv = personShellArgv("/tmp/x/rc", "xterm", null);
    expect(argv).toContain("GIT_DIR=/nonexistent");
    expect(argv.join(" ")).not.toContain("GIT_WORK_TREE");
  });

  it("keeps the nonce out of the argv, and in the rc only in a variable that is not exported", () => {
    const nonce = "0123456789abcdef0123456789abcdef";
    expect(personShellArgv("/tmp/x/rc", "xterm", null).join(" ")).not.toContain(nonce);
    const rc = personShellRc(nonce);
    expect(rc).toContain(`__drydock_nonce=${nonce}`);
    expect(rc).not.toMatch(/export[^\n]*__drydock_nonce|declare -x/);
    expect(rc.startsWith(personShellPrelude())).toBe(true);
  });

  it("puts on PATH only directories it checks are root's, and names /etc/inputrc only on the same terms", () => {
    const prelude = personShellPrelude();
    expect(prelude).not.toContain("/opt/venv");
    expect(prelude).toMatch(
      /__drydock_trusted \/etc\/inputrc && export INPUTRC=\/etc\/inputrc \|\| export INPUTRC=\/dev\/null/,
    );
  });
});
