import { describe, expect, it } from "vitest";
import { dockerfileImages } from "../../../src/environment/dockerfile-images.js";
import { readDockerfile } from "../../../src/environment/dockerfile-reader.js";
import { pinnedInstructions, writeDockerfile } from "../../../src/environment/dockerfile-writer.js";

/** A fake image id per reference, as the policy would give. */
const idOf = (ref: string) => `sha256:${Buffer.from(ref).toString("hex").padEnd(64, "0").slice(0, 64)}`;

function written(text: string, args: Record<string, string> = {}) {
  const found = dockerfileImages(text, args);
  expect(found.problems).toEqual([]);
  const pins = Object.fromEntries(found.images.map((i) => [i.ref, idOf(i.ref)]));
  return { found, pins, text: writeDockerfile(found.instructions, pins) };
}

const bare = (list: Array<{ keyword: string; flags: unknown; args: string }>) =>
  list.map(({ keyword, flags, args }) => ({ keyword, flags, args }));

const SAMPLE = [
  "# escape=\\",
  "ARG DRYDOCK_SANDBOX",
  "ARG PY=3.12",
  "# a comment",
  "FROM python:${PY} AS Build",
  "ENV A=1 \\",
  '    B="two words"',
  "RUN pip install \\",
  "    # the one package",
  "    requests",
  "from ${DRYDOCK_SANDBOX}",
  "ARG SRC=tools:1",
  "copy --chown=1000:1000 --from=build /opt /opt",
  "COPY --from=${SRC} /bin/tool /usr/local/bin/",
  "COPY --from=0 /etc/x /etc/x",
  'CMD ["bash", "-c", "echo \\"hi\\""]',
  "HEALTHCHECK --interval=30s CMD true",
  "USER 1000",
  "",
].join("\r\n");

describe("writeDockerfile", () => {
  it("writes one plain line per checked instruction, every image by the id checked, stages by number", () => {
    const { text } = written(SAMPLE, { DRYDOCK_SANDBOX: "drydock-sandbox:latest" });
    expect(text).toBe(
      [
        "ARG DRYDOCK_SANDBOX",
        "ARG PY=3.12",
        `FROM ${idOf("python:3.12")} AS build`,
        'ENV A=1     B="two words"',
        "RUN pip install     requests",
        `FROM ${idOf("drydock-sandbox:latest")}`,
        "ARG SRC=tools:1",
        "COPY --chown=1000:1000 --from=0 /opt /opt",
        `COPY --from=${idOf("tools:1")} /bin/tool /usr/local/bin/`,
        "COPY --from=0 /etc/x /etc/x",
        'CMD ["bash", "-c", "echo \\"hi\\""]',
        "HEALTHCHECK --interval=30s CMD true",
        "USER 1000",
        "",
      ].join("\n"),
    );
  });

  it("round-trips: the written text reads back as exactly the checked instructions, and is its own canonical form", () => {
    const { found, pins, text } = written(SAMPLE, { DRYDOCK_SANDBOX: "drydock-sandbox:latest" });
    const back = readDockerfile(text);
    expect(back.problems).toEqual([]);
    expect(bare(back.instructions)).toEqual(bare(pinnedInstructions(found.instructions, pins)));
    // Read again, the written file names only the ids checked, and writes itself unchanged.
    const again = dockerfileImages(text, {});
    expect(again.problems).toEqual([]);
    expect(new Set(again.images.map((i) => i.ref))).toEqual(new Set(Object.values(pins)));
    const ids = Object.fromEntries(again.images.map((i) => [i.ref, i.ref]));
    expect(writeDockerfile(again.instructions, ids)).toBe(text);
  });

  it("writes FROM an earlier stage by its name, and scratch as scratch", () => {
    const { text } = written("FROM a AS one\nFROM one AS two\nFROM scratch\nCOPY --from=two / /\n");
    expect(text).toBe(`FROM ${idOf("a")} AS one\nFROM one AS two\nFROM scratch\nCOPY --from=1 / /\n`);
  });

  it("writes nothing for an image it was not given an id for", () => {
    const found = dockerfileImages("FROM a\nCOPY --from=b / /\n", {});
    expect(() => writeDockerfile(found.instructions, { a: idOf("a") })).toThrow(
      /the image b was not checked/,
    );
    expect(() => writeDockerfile(found.instructions, { a: idOf("a"), b: "b:latest" })).toThrow(/not checked/);
    const unresolved = found.instructions.map((i) => ({ ...i, copyFrom: undefined }));
    expect(() => writeDockerfile(unresolved, { a: idOf("a"), b: idOf("b") })).toThrow(
      /--from=b was not resolved/,
    );
  });

  it("whatever is spliced into a Dockerfile, it is refused or written so that it names only the images checked", () => {
    // A small deterministic fuzz: characters that readers split lines, words and flags on.
    const pieces = [
      "\r",
      "\n",
      "\v",
      "\f",
      "\t",
      " ",
      "\\",
      "`",
      "#",
      "\\\n",
      "--from=evil ",
      "\u0085",
      "\u00a0",
      '"',
      "<<E\n",
      "=",
      "$X",
      "\r\n",
    ];
    const base =
      "# escape=\\\nARG X=evil\nFROM a AS s\nCOPY --chown=1:1 --from=s /x /y\nRUN echo hi \\\n  there\nCOPY --from=b /p /q\n";
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    let refused = 0;
    let accepted = 0;
    for (let round = 0; round < 3000; round++) {
      let text = base;
      for (let k = 0, edits = 1 + random(3); k < edits; k++) {
        const at = random(text.length + 1);
        text = text.slice(0, at) + pieces[random(pieces.length)]! + text.slice(at);
      }
      const found = dockerfileImages(text, {});
      if (found.problems.length > 0) {
        refused++;
        continue;
      }
      accepted++;
      const pins = Object.fromEntries(found.images.map((i) => [i.ref, idOf(i.ref)]));
      const out = writeDockerfile(found.instructions, pins);
      expect(out).not.toMatch(/[\r\v\f\u0085]|^#|\\$/m);
      const again = dockerfileImages(out, {});
      expect(again.problems).toEqual([]);
      for (const image of again.images) expect(Object.values(pins)).toContain(image.ref);
      expect(bare(readDockerfile(out).instructions)).toEqual(
        bare(pinnedInstructions(found.instructions, pins)),
      );
    }
    expect(refused).toBeGreaterThan(100);
    expect(accepted).toBeGreaterThan(100);
  });
});
