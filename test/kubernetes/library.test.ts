/**
 * The library on the cluster: `Drydock.local({ engine: "kubernetes:…" })` gives a sandbox whose box
 * is a Pod; commands, files and the diff work as on Docker, and closing it removes the Pod.
 */
import { describe, expect, inject, it } from "vitest";
import { Drydock } from "../../src/index.js";
import { testNamespace } from "../helpers/kube.js";
import { tempRepo } from "../helpers/repos.js";

describe("the library on the cluster", () => {
  it("runs commands, writes files and diffs in a Pod, and removes it on close", async () => {
    await using ns = await testNamespace("library");
    using repo = tempRepo({ "README.md": "hello\n" });
    const drydock = Drydock.local({ engine: ns.target, image: inject("sandboxImage") });
    try {
      const box = await drydock.create({ repo: repo.path });
      expect((await ns.pods()).map((p) => p.metadata?.name)).toEqual([`drydock-${box.id}`]);
      const run = await box.commands.run("cat README.md; echo oops >&2; exit 3");
      expect(run).toMatchObject({ stdout: "hello\n", stderr: "oops\n", exitCode: 3 });
      await box.files.write("notes/new.txt", "fresh\n");
      expect(await box.files.read("notes/new.txt")).toBe("fresh\n");
      expect((await box.diff()).diff).toContain("+fresh");
      await box.close();
      await expect.poll(async () => (await ns.pods()).length, { timeout: 60_000 }).toBe(0);
    } finally {
      await drydock.close();
    }
  });

  it("refuses a target that is not one, naming the option", async () => {
    const drydock = Drydock.local({ engine: "kubernetes:Not_A_Namespace" });
    try {
      await expect(drydock.create({ repo: "." })).rejects.toThrow(
        /^engine: "Not_A_Namespace" is not a namespace name/,
      );
    } finally {
      await drydock.close();
    }
  });
});
