/**
 * The package as a user gets it: `npm pack` of this tree, installed globally from the tarball
 * into a prefix of its own, and `drydock doctor` run from there against this machine's engine.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "drydock-package-"));
const prefix = join(tmp, "prefix");
let files: string[] = [];
let tarball = "";

describe("the npm package", () => {
  beforeAll(() => {
    // dist/ is built by the test set-up; packing without scripts keeps the build (prepack) out of
    // a run that other test files read dist/ during.
    const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    const [packed] = JSON.parse(out) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = join(tmp, packed!.filename);
    files = packed!.files.map((f) => f.path);
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("holds the licence, the security policy and what runs, and no tests, test scripts or source maps", () => {
    expect(files).toEqual(
      expect.arrayContaining(["LICENSE", "SECURITY.md", "README.md", "dist/cli/main.js"]),
    );
    expect(files).toEqual(expect.arrayContaining(["Dockerfile.sandbox", "scripts/setup.sh"]));
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    expect(files.filter((f) => /^(test|bench|docs)\//.test(f))).toEqual([]);
    // Read at run time from the package: the offline model's script, the live page's script and
    // style, the report's browser script, the scripts sent into boxes; never TypeScript source.
    const fromSrc = files.filter((f) => f.startsWith("src/") && !f.startsWith("src/gateway/offline/"));
    expect(
      fromSrc.filter((f) => !/\.(sh|css)$|^src\/server\/live\/page\/.*\.js$|\.browser\.js$/.test(f)),
    ).toEqual([]);
    expect(fromSrc).toEqual(
      expect.arrayContaining([
        "src/server/live/page/live-app.css",
        "src/server/live/page/live-app.js",
        "src/eval/html-report.browser.js",
        "src/tools/box-files/read.sh",
      ]),
    );
    // The box agent: its loader, bootstrap and modules, and none of its tests.
    expect(files).toEqual(
      expect.arrayContaining([
        "box-agent/loader.py",
        "box-agent/bootstrap.py",
        "box-agent/drydock_box/channel.py",
      ]),
    );
    expect(files.filter((f) => f.startsWith("box-agent/") && /test/.test(f))).toEqual([]);
    expect(files).not.toContain("scripts/test.sh");
    expect(files).not.toContain("scripts/install-chromium.sh");
    expect(files).not.toContain("scripts/make-eval-fixtures.sh");
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.prepack).toBe("tsc -p tsconfig.json && node scripts/prune-dist.mjs");
    expect(readFileSync(join(root, "LICENSE"), "utf8")).toMatch(
      /^MIT License\n\nCopyright \(c\) \d{4} the drydock authors\n/,
    );
  });

  it("installs globally from the tarball, and drydock doctor passes from there", { timeout: 300_000 }, () => {
    const install = spawnSync(
      "npm",
      ["install", "-g", "--prefix", prefix, tarball, "--prefer-offline", "--no-audit", "--no-fund"],
      { encoding: "utf8", timeout: 240_000 },
    );
    expect(install.status, install.stderr).toBe(0);
    const installed = join(prefix, "lib", "node_modules", "drydock");
    const main = readFileSync(join(installed, "dist", "cli", "main.js"), "utf8");
    expect(main).not.toContain("sourceMappingURL");
    // The live page's script and style are read from the package at run time, by the built server.
    const assets = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { liveAsset } = await import(${JSON.stringify(join(installed, "dist", "server", "live", "live-assets.js"))});
         process.stdout.write(JSON.stringify([liveAsset("live-app.js"), liveAsset("live-app.css")]));`,
      ],
      { encoding: "utf8" },
    );
    expect(assets.status, assets.stderr).toBe(0);
    expect(JSON.parse(assets.stdout)).toEqual([
      readFileSync(join(root, "src", "server", "live", "page", "live-app.js"), "utf8"),
      readFileSync(join(root, "src", "server", "live", "page", "live-app.css"), "utf8"),
    ]);

    const bin = join(prefix, "bin", "drydock");
    const version = spawnSync(bin, ["--version"], { encoding: "utf8" });
    expect(version.stdout.trim(), version.stderr).toBe("0.1.0");
    const doctor = spawnSync(bin, ["doctor"], {
      encoding: "utf8",
      env: { ...process.env, DRYDOCK_STATE_DIR: join(tmp, "state") },
      timeout: 120_000,
    });
    expect(doctor.status, `${doctor.stdout}\n${doctor.stderr}`).toBe(0);
    // The image the installed copy asks for is the one this tree builds: same inputs, same hash.
    expect(doctor.stdout).toMatch(/^ok +sandbox image: drydock-sandbox:[0-9a-f]{12}$/m);
    expect(doctor.stdout).toMatch(/^ok +engine: /m);
  });

  it(
    "leaves the Kubernetes client out unless asked for, and says how to add it",
    { timeout: 300_000 },
    () => {
      const modules = join(prefix, "lib", "node_modules");
      expect(existsSync(join(modules, "@kubernetes"))).toBe(false);
      expect(existsSync(join(modules, "drydock", "node_modules", "@kubernetes"))).toBe(false);
      const bin = join(prefix, "bin", "drydock");
      const env = {
        ...process.env,
        DRYDOCK_STATE_DIR: join(tmp, "state"),
        KUBECONFIG: join(tmp, "no-kubeconfig"),
      };
      const without = spawnSync(bin, ["doctor", "--engine", "kubernetes:drydock-none"], {
        encoding: "utf8",
        env,
      });
      expect(without.status).not.toBe(0);
      const told = `${without.stdout}\n${without.stderr}`;
      expect(told).toMatch(/npm install -g @kubernetes\/client-node@1\.4\.0/);
      // As told: then the backend loads, and what stops it is the missing cluster, not the library.
      const add = spawnSync(
        "npm",
        [
          "install",
          "-g",
          "--prefix",
          prefix,
          "@kubernetes/client-node@1.4.0",
          "--prefer-offline",
          "--no-audit",
          "--no-fund",
        ],
        { encoding: "utf8", timeout: 240_000 },
      );
      expect(add.status, add.stderr).toBe(0);
      const withClient = spawnSync(bin, ["doctor", "--engine", "kubernetes:drydock-none"], {
        encoding: "utf8",
        env,
      });
      const said = `${withClient.stdout}\n${withClient.stderr}`;
      expect(said).not.toMatch(/client-node/);
      expect(said).toMatch(/kubeconfig/i);
    },
  );
});
