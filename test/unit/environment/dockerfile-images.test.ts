import { describe, expect, it } from "vitest";
import { dockerfileImages } from "../../../src/environment/dockerfile-images.js";

const refs = (text: string, args: Record<string, string> = {}) =>
  dockerfileImages(text, args).images.map((i) => `${i.line} ${i.via} ${i.ref}`);

describe("dockerfileImages", () => {
  it("substitutes global ARGs (build args first, then defaults) in FROM", () => {
    const text = "ARG DRYDOCK_SANDBOX\nARG TAG=3.12\nFROM ${DRYDOCK_SANDBOX}\nFROM python:$TAG AS py\n";
    expect(refs(text, { DRYDOCK_SANDBOX: "drydock-sandbox:latest" })).toEqual([
      "3 FROM drydock-sandbox:latest",
      "4 FROM python:3.12",
    ]);
    expect(refs(text, { DRYDOCK_SANDBOX: "s", TAG: "3.13" })).toContain("4 FROM python:3.13");
  });

  it("tells earlier stages from images in FROM and COPY --from (a stage's own name is an image there)", () => {
    const text = [
      "FROM base:1 AS Build",
      "COPY --from=other:2 /a /a",
      "FROM build",
      "COPY --chown=1:1 --from=BUILD /x /x",
      "COPY --from=0 /y /y",
      "COPY --from=1 /z /z",
      "FROM scratch AS last",
      "COPY --from=last /w /w",
    ].join("\n");
    expect(refs(text)).toEqual([
      "1 FROM base:1",
      "2 COPY --from other:2",
      "6 COPY --from 1",
      "8 COPY --from last",
    ]);
    const copies = dockerfileImages(text, {}).instructions.filter((i) => i.keyword === "COPY");
    expect(copies.map((i) => i.copyFrom)).toEqual([
      { image: "other:2" },
      { stage: 0 },
      { stage: 0 },
      { image: "1" },
      { image: "last" },
    ]);
  });

  it("refuses RUN --mount (a BuildKit flag the engine's builder does not run), whatever it mounts", () => {
    for (const mount of [
      "type=bind,from=third:3,target=/m",
      'type=bind,"from=x",target=/m',
      "type=cache,target=/c",
    ]) {
      const found = dockerfileImages(`FROM a\nRUN --mount=${mount} true\n`, {});
      expect(found.problems[0]).toMatchObject({ line: 2, problem: expect.stringContaining("RUN --mount=") });
    }
  });

  it("joins continuation lines (after a plain # escape=\\) and skips comments and blank lines inside them", () => {
    const text = "# escape=\\\nFROM \\\n  # a comment\n\n  a:1\nFROM scratch\nCOPY \\\n --from=b:2 / /\n";
    expect(refs(text)).toEqual(["2 FROM a:1", "7 COPY --from b:2"]);
  });

  it("refuses ONBUILD in the file, whatever its instruction", () => {
    const found = dockerfileImages("FROM a\nONBUILD COPY --from=victim:1 / /x\nonbuild\tRUN true\n", {});
    expect(found.problems.map((p) => p.line)).toEqual([2, 3]);
    expect(found.problems[0]!.problem).toMatch(/^ONBUILD is refused/);
  });

  it("refuses references that do not resolve to one image name, never dropping them", () => {
    const found = dockerfileImages(
      'ARG NOPE\nFROM ${NOPE}\nFROM x${UNDECLARED:-y}\nFROM "quoted"\nCOPY --from=$STAGE / /\nFROM\n',
      {},
    );
    expect(found.images).toEqual([]);
    expect(found.problems.map((p) => p.line)).toEqual([2, 3, 4, 5, 6]);
  });

  it("an ARG in a stage sees the build arg, and a build arg undeclared is not substituted", () => {
    const text = "FROM a\nARG SRC=def:1\nCOPY --from=${SRC} / /\nCOPY --from=${UNSET} / /\n";
    const found = dockerfileImages(text, { SRC: "given:2", UNSET: "x:1" });
    expect(found.images.map((i) => i.ref)).toEqual(["a", "given:2"]);
    expect(found.problems.map((p) => p.line)).toEqual([4]);
  });

  it("refuses an instruction other than ARG before the first FROM", () => {
    const found = dockerfileImages("ARG A=1\nCOPY --from=x:1 / /\nRUN true\nFROM a\n", {});
    expect(found.problems.map((p) => `${p.line}: ${p.problem}`)).toEqual([
      "2: COPY comes before the first FROM",
      "3: RUN comes before the first FROM",
    ]);
    expect(found.images.map((i) => i.ref)).toEqual(["a"]);
  });
});
