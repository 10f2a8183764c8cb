/**
 * A command loads what it uses: the Kubernetes client library and dockerode (with gRPC, protobuf
 * and ssh2 behind it) are most of what a command would load at start, so `--help` and a flag
 * refused before any engine is asked load neither; asking the Docker engine loads dockerode, and
 * naming a Kubernetes backend loads the Kubernetes client. Seen through a module hook that logs
 * every module the process resolves.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const dir = mkdtempSync(join(tmpdir(), "drydock-cli-start-"));
writeFileSync(
  join(dir, "hooks.mjs"),
  `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.DRYDOCK_TEST_LOADED, resolved.url + "\\n");
  return resolved;
}
`,
);
writeFileSync(
  join(dir, "register.mjs"),
  `import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n`,
);

let runs = 0;
/** Runs the CLI with `args`; returns its exit code and the packages it loaded. */
function loaded(args: string[]): { status: number | null; output: string; packages: Set<string> } {
  const log = join(dir, `loaded-${++runs}.txt`);
  writeFileSync(log, "");
  const r = spawnSync(process.execPath, ["--import", join(dir, "register.mjs"), cli, ...args], {
    encoding: "utf8",
    env: { ...process.env, DRYDOCK_TEST_LOADED: log },
    timeout: 120_000,
  });
  const packages = new Set(
    readFileSync(log, "utf8")
      .split("\n")
      .map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
      .filter((name): name is string => name !== undefined),
  );
  return { status: r.status, output: r.stdout + r.stderr, packages };
}

const HEAVY = ["@kubernetes/client-node", "dockerode"];

describe("what a command loads", () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("--help and flags refused before any engine is asked load neither Kubernetes' client nor dockerode", () => {
    for (const args of [
      ["--help"],
      ["eval", "tasks.jsonl", "--concurrency", "0"],
      ["serve", "--port", "-1"],
      ["run", "--cpus", "lots", "--", "true"],
    ]) {
      const r = loaded(args);
      expect(r.status, `${args.join(" ")}: ${r.output}`).toBe(args[0] === "--help" ? 0 : 2);
      // The hook saw the command's own modules (it would see nothing were it not working).
      expect(r.packages.has("commander"), args.join(" ")).toBe(true);
      for (const name of HEAVY) expect(r.packages.has(name), `${args.join(" ")} loaded ${name}`).toBe(false);
    }
  });

  it("loads dockerode to ask the engine, and Kubernetes' client for a Kubernetes backend", () => {
    const docker = loaded(["doctor", "--engine-only"]);
    expect(docker.status, docker.output).toBe(0);
    expect(docker.packages.has("dockerode")).toBe(true);
    expect(docker.packages.has("@kubernetes/client-node")).toBe(false);
    // A kubeconfig that does not parse: the backend is loaded to read it, and says what is wrong.
    const kubeconfig = join(dir, "kubeconfig.yaml");
    writeFileSync(kubeconfig, "clusters: [\n");
    const kube = loaded(["doctor", "--engine", `kubernetes:drydock-test?kubeconfig=${kubeconfig}`]);
    expect(kube.status).toBe(1);
    expect(kube.output).toMatch(/kubeconfig/);
    expect(kube.packages.has("@kubernetes/client-node")).toBe(true);
  });
});
