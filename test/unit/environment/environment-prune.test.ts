import { describe, expect, it } from "vitest";
import {
  choosePrune,
  formatSize,
  type EnvironmentImage,
} from "../../../src/environment/environment-prune.js";

const now = new Date("2026-06-15T12:00:00Z");
const image = (name: string, daysOld: number, boxes = 0, tags = [name]): EnvironmentImage => ({
  id: `sha256:${name}`,
  name,
  tags,
  kind: "environment",
  repo: "/src/app",
  source: ".drydock/environment.yaml",
  createdAt: new Date(now.getTime() - daysOld * 86_400_000),
  sizeBytes: 1024 ** 3,
  boxes,
});

describe("choosePrune", () => {
  it("removes unused images older than the limit, keeps the rest with the reason", () => {
    const choice = choosePrune(
      [image("old", 30), image("recent", 2), image("used", 30, 2), image("untagged", 0, 0, [])],
      14 * 86_400_000,
      now,
    );
    expect(choice.remove.map((i) => i.name)).toEqual(["old", "untagged"]);
    expect(choice.keep.map((k) => [k.image.name, k.why])).toEqual([
      ["recent", "built 2 d ago, within --older-than"],
      ["used", "2 boxes made from it"],
    ]);
  });

  it("with 0 days removes every unused image, and never one a box was made from", () => {
    const choice = choosePrune([image("a", 0), image("b", 0, 1)], 0, now);
    expect(choice.remove.map((i) => i.name)).toEqual(["a"]);
    expect(choice.keep).toMatchObject([{ why: "1 box made from it" }]);
  });

  it("prints sizes a person reads", () => {
    expect(formatSize(512 * 1024)).toBe("512 KiB");
    expect(formatSize(3.5 * 1024 ** 2)).toBe("3.5 MiB");
    expect(formatSize(1.5 * 1024 ** 3)).toBe("1.50 GiB");
  });
});
