import { describe, expect, it } from "vitest";
import { toCreateOptions } from "../../../src/engine/container-spec.js";
import type { EngineRuntime } from "../../../src/engine/engine.js";
import { terminalArgv } from "../../../src/engine/runtime-terminal.js";
import { boxSpec, runscHostPids } from "../../../src/sandbox/box-profile.js";
import {
  checkRuntimeNetwork,
  parseRuntimeChoice,
  pickRuntime,
  runscProblems,
  runtimeFromEnv,
} from "../../../src/sandbox/box-runtime.js";
import { poolMisfit, poolProfile } from "../../../src/session/pool-fit.js";

const runc: EngineRuntime = { name: "runc", path: "runc", args: [] };
const runsc: EngineRuntime = {
  name: "runsc",
  path: "/usr/bin/runsc",
  args: ["--network=none"],
};

describe("runtime choice", () => {
  it("accepts runc, runsc and auto, in any case", () => {
    expect(parseRuntimeChoice("runc", "--runtime")).toBe("runc");
    expect(parseRuntimeChoice("RunSC", "--runtime")).toBe("runsc");
    expect(parseRuntimeChoice(" auto ", "--runtime")).toBe("auto");
  });

  it("refuses anything else, naming the field and the choices", () => {
    expect(() => parseRuntimeChoice("gvisor", "--runtime")).toThrow(
      /^--runtime: "gvisor" is not a runtime; use one of runc, runsc, auto$/,
    );
  });

  it("defaults to runc and reads DRYDOCK_RUNTIME", () => {
    expect(runtimeFromEnv({})).toBe("runc");
    expect(runtimeFromEnv({ DRYDOCK_RUNTIME: "" })).toBe("runc");
    expect(runtimeFromEnv({ DRYDOCK_RUNTIME: "runsc" })).toBe("runsc");
    expect(() => runtimeFromEnv({ DRYDOCK_RUNTIME: "kata" })).toThrow(/^DRYDOCK_RUNTIME: "kata"/);
  });
});

describe("pickRuntime", () => {
  it("auto takes runsc where the engine has it, else runc", () => {
    expect(pickRuntime("auto", [runc, runsc])).toBe("runsc");
    expect(pickRuntime("auto", [runc])).toBe("runc");
    // A runsc registered without the arguments boxes need is not chosen by auto.
    expect(pickRuntime("auto", [runc, { ...runsc, args: [] }])).toBe("runc");
  });

  it("refuses runsc where the engine lacks it, with how to register it", () => {
    expect(() => pickRuntime("runsc", [runc], "--runtime")).toThrow(
      /^--runtime: the engine has no runtime "runsc" \(it has runc\); register it with `bash scripts\/setup.sh`/,
    );
  });

  it("refuses a runsc registered without the argument boxes need, and accepts an older registration", () => {
    const bare = { ...runsc, args: [] };
    expect(runscProblems(bare)).toHaveLength(1);
    expect(runscProblems(runsc)).toEqual([]);
    // Registered by an earlier release, with host unix sockets open: no box has one to reach.
    expect(runscProblems({ ...runsc, args: ["--network=none", "--host-uds=open"] })).toEqual([]);
    expect(() => pickRuntime("runsc", [runc, bare], "--runtime")).toThrow(/--network=none.*daemon\.json/);
  });

  it("gives runc where the engine has it", () => {
    expect(pickRuntime("runc", [runc, runsc])).toBe("runc");
    expect(() => pickRuntime("runc", [runsc], "--runtime")).toThrow(/no runtime "runc"/);
  });
});

describe("runtime and network", () => {
  it("refuses a Docker network under runsc and allows it under runc", () => {
    expect(() => checkRuntimeNetwork("runsc", "bridge", "--network")).toThrow(
      /^--network: a Docker network \("bridge"\) works under runtime runc only/,
    );
    expect(() => checkRuntimeNetwork("runsc", "none", "--network")).not.toThrow();
    expect(() => checkRuntimeNetwork("runsc", undefined, "--network")).not.toThrow();
    expect(() => checkRuntimeNetwork("runc", "bridge", "--network")).not.toThrow();
  });
});

describe("the box profile's runtime", () => {
  it("reaches the engine's create options, and the engine's default is left alone without one", () => {
    expect(toCreateOptions(boxSpec({ image: "i", runtime: "runsc" })).HostConfig?.Runtime).toBe("runsc");
    expect(toCreateOptions(boxSpec({ image: "i" })).HostConfig).not.toHaveProperty("Runtime");
  });

  it("keeps every default of the hardened profile under runsc", () => {
    const spec = boxSpec({ image: "i", runtime: "runsc" });
    const plain = boxSpec({ image: "i" });
    // The engine's pids limit leaves room for gVisor's own threads (see runscHostPids).
    expect(spec.pidsLimit).toBe(runscHostPids(plain.pidsLimit));
    expect(spec.pidsLimit).toBeGreaterThan(plain.pidsLimit * 2);
    // The box's own limit, for a backend that sets it where gVisor counts the box's processes.
    expect(spec.processLimit).toBe(plain.pidsLimit / 2);
    expect(plain.processLimit).toBeUndefined();
    expect({ ...spec, runtime: undefined, pidsLimit: plain.pidsLimit, processLimit: undefined }).toEqual(
      plain,
    );
    expect(spec).toMatchObject({ network: "none", user: "1000", readOnlyRootfs: true, capDrop: ["ALL"] });
  });

  it("is part of what a pooled box must match", () => {
    const profile = poolProfile("img:1", { runtime: "runsc" });
    expect(poolMisfit(profile, { image: "img:1", runtime: "runsc" })).toBeUndefined();
    expect(poolMisfit(profile, { image: "img:1", runtime: "runc" })).toMatch(/^runtime runc/);
    expect(poolMisfit(poolProfile("img:1"), { image: "img:1", runtime: "runsc" })).toMatch(/runtime/);
  });
});

describe("terminalArgv", () => {
  const size = { cols: 80, rows: 24 };

  it("leaves the program as it is under runc", () => {
    expect(terminalArgv(["bash", "-c", "tty"], "runc", size)).toEqual(["bash", "-c", "tty"]);
    expect(terminalArgv(["bash"], undefined, size)).toEqual(["bash"]);
  });

  it("starts it under script, sized and quoted, under runsc", () => {
    const argv = terminalArgv(["bash", "-c", "echo 'it''s'; tty"], "runsc", size);
    expect(argv.slice(0, 5)).toEqual(["/usr/bin/script", "--quiet", "--flush", "--return", "--command"]);
    expect(argv.at(-1)).toBe("/dev/null");
    expect(argv[5]).toBe(
      `/bin/stty cols 80 rows 24 2>/dev/null; exec 'bash' '-c' 'echo '\\''it'\\'''\\''s'\\''; tty'`,
    );
  });
});
