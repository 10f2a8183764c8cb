/**
 * What the engine's builder reads is what drydock checked. A repository's Dockerfile that spells a
 * `COPY --from=<a private local image>` so that a reader other than the builder's misses it (a
 * directive the builder does not honour, a directive value with a space, a lone carriage return,
 * a BuildKit flag, a frontend) is refused before any build; an allowed base image's ONBUILD
 * triggers never run; and a tag moved between the check and the build changes nothing, because
 * the builder gets the Dockerfile drydock wrote, every image pinned to the id it checked.
 */
import { randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { Readable } from "node:stream";
import tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnvironmentImages } from "../../src/environment/environment-images.js";
import { markedImage } from "../helpers/registry-images.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine, testSession } from "../helpers/sessions.js";

const SECRET = `private-${randomBytes(8).toString("hex")}`;
const suffix = randomBytes(4).toString("hex");
/** A local image no repository may read: another project's build, say. */
const PRIVATE = `drydock-test-private:${suffix}`;
/** An image the operator allows, and one with an ONBUILD trigger that reads PRIVATE. */
const ALLOWED = `drydock-test-allowed:${suffix}`;
const TRIGGERED = `drydock-test-onbuild:${suffix}`;
const roots = new Set<string>();

function repoFor(files: Record<string, string>): TempRepo {
  const repo = tempRepo(files);
  roots.add(realpathSync(repo.path));
  return repo;
}

/** A repository whose environment is `.devcontainer/Dockerfile` with this text. */
function dockerfileRepo(dockerfile: string): TempRepo {
  return repoFor({
    ".devcontainer/devcontainer.json": '{"build": {"dockerfile": "Dockerfile"}}',
    ".devcontainer/Dockerfile": dockerfile,
  });
}

beforeAll(async () => {
  const engine = await testEngine();
  await markedImage(engine, sandboxImage(), PRIVATE, SECRET);
  await markedImage(engine, sandboxImage(), ALLOWED, "allowed");
  const pack = tar.pack();
  pack.entry(
    { name: "Dockerfile" },
    `FROM ${sandboxImage()}\nONBUILD COPY --from=${PRIVATE} /etc/drydock-marker /opt/stolen\n`,
  );
  pack.finalize();
  await engine.buildImage(Readable.from(pack), { tag: TRIGGERED, buildArgs: {} }, () => undefined);
});

afterAll(async () => {
  const engine = await testEngine();
  for (const image of await engine.listImages("drydock.env.repo")) {
    if (!roots.has(image.labels["drydock.env.repo"] ?? "")) continue;
    for (const tag of image.tags) await engine.removeImage(tag);
    if (image.tags.length === 0) await engine.removeImage(image.id);
  }
  for (const ref of [PRIVATE, ALLOWED, TRIGGERED]) await engine.removeImage(ref).catch(() => undefined);
});

interface Outcome {
  /** The refusal, when drydock refused. */
  error?: string;
  /** What the built environment holds at /opt/stolen and /etc/drydock-marker, when it built. */
  stolen?: string;
  marker?: string;
}

/** Asks for the repository's environment; when one is built, reads what it holds from a box. */
async function attempt(repo: TempRepo, allow?: string[]): Promise<Outcome> {
  const envs = new EnvironmentImages(await testEngine(), {
    baseImage: sandboxImage(),
    allowBaseImages: allow,
  });
  let image: string;
  try {
    image = (await envs.imageFor({ repo: repo.path, onLine: () => undefined })).image;
  } catch (error) {
    return { error: (error as Error).message };
  }
  await using box = await testSession(repo.path, { image });
  const read = async (path: string) => (await box.bash(`cat ${path} 2>/dev/null || true`, {})).output.trim();
  return { stolen: await read("/opt/stolen"), marker: await read("/etc/drydock-marker") };
}

/** The private image's file reached no image, and drydock refused with the file, line and what. */
function expectRefused(outcome: Outcome, message: RegExp): void {
  expect(outcome.stolen ?? "").not.toContain(SECRET);
  expect(outcome.marker ?? "").not.toContain(SECRET);
  expect(outcome.error).toMatch(message);
}

const FROM_SANDBOX = "ARG DRYDOCK_SANDBOX\nFROM ${DRYDOCK_SANDBOX}\n";

describe("a COPY --from hidden from a reader other than the builder's is refused before any build", () => {
  it("an unknown directive before # escape= (the builder then ignores the escape)", async () => {
    using repo = dockerfileRepo(
      `# foo=bar\n# escape=\`\n${FROM_SANDBOX}RUN true # \`\nCOPY --from=${PRIVATE} /etc/drydock-marker /opt/stolen\n`,
    );
    expectRefused(
      await attempt(repo),
      /\.devcontainer\/Dockerfile:1: the parser directive "# foo=bar" is refused/,
    );
  });

  it("a second spelling of it: a tab and spaces around the unknown directive's =", async () => {
    using repo = dockerfileRepo(
      `#\tcheck = on\n# escape=\`\n${FROM_SANDBOX}RUN true # \`\nCOPY --from=${PRIVATE} /etc/drydock-marker /opt/stolen\n`,
    );
    expectRefused(await attempt(repo), /\.devcontainer\/Dockerfile:1: the parser directive .* is refused/);
  });

  it("a value with a space in # escape= itself (the builder refuses it; a reader that skips it reads on with \\)", async () => {
    using repo = dockerfileRepo(
      `# escape=\` x\n${FROM_SANDBOX}RUN true # \\\nCOPY --from=${PRIVATE} /etc/drydock-marker /opt/stolen\n`,
    );
    expectRefused(
      await attempt(repo),
      /\.devcontainer\/Dockerfile:1: the parser directive "# escape=` x" is refused: drydock reads only the default escape character/,
    );
  });

  it("a directive value with a space before # escape= (# syntax=a b: the builder honours both)", async () => {
    using repo = dockerfileRepo(
      `# syntax=a b\n# escape=\`\n${FROM_SANDBOX}RUN true # \\\nCOPY --from=${PRIVATE} /etc/drydock-marker /opt/stolen\n`,
    );
    expectRefused(
      await attempt(repo),
      /\.devcontainer\/Dockerfile:1: the parser directive "# syntax=a b" is refused/,
    );
  });

  it("a lone carriage return between COPY and --from", async () => {
    using repo = dockerfileRepo(`${FROM_SANDBOX}COPY\r--from=${PRIVATE} /etc/drydock-marker /opt/stolen\n`);
    expectRefused(
      await attempt(repo),
      /\.devcontainer\/Dockerfile:3: holds a carriage return \(CR\) that does not end a line/,
    );
  });

  it("a vertical tab, a form feed and a next-line character as separators", async () => {
    for (const [separator, name] of [
      ["\v", "vertical tab"],
      ["\f", "form feed"],
      ["\u0085", "next-line character"],
    ] as const) {
      using repo = dockerfileRepo(
        `${FROM_SANDBOX}COPY --chown=0:0${separator}--from=${PRIVATE} /etc/drydock-marker /opt/stolen\n`,
      );
      expectRefused(await attempt(repo), new RegExp(`Dockerfile:3: holds a ${name}`));
    }
  });

  it("a # syntax= frontend (it could read the file any way it likes) and a RUN --mount from=", async () => {
    using frontend = dockerfileRepo(`# syntax=docker/dockerfile:1\n${FROM_SANDBOX}`);
    expectRefused(
      await attempt(frontend),
      /Dockerfile:1: the parser directive "# syntax=docker\/dockerfile:1" is refused: drydock reads no parser directives/,
    );
    using mount = dockerfileRepo(
      `${FROM_SANDBOX}RUN --mount=type=bind,"from=${PRIVATE}",target=/m cat /m/etc/drydock-marker > /tmp/x\n`,
    );
    expectRefused(
      await attempt(mount),
      /Dockerfile:3: RUN --mount=.* is refused: drydock checks no --mount flag on RUN/,
    );
  });

  it("a heredoc whose body the builder would read as instructions", async () => {
    using repo = dockerfileRepo(
      `${FROM_SANDBOX}RUN <<EOF\nCOPY --from=${PRIVATE} /etc/drydock-marker /opt/stolen\nEOF\n`,
    );
    expectRefused(await attempt(repo), /Dockerfile:3: heredocs \(<<EOF\) are not read by drydock/);
  });

  it("lower and mixed case, tabs and continuations still name the image the check sees (and refuses)", async () => {
    using repo = dockerfileRepo(
      `arg DRYDOCK_SANDBOX\nfrom \${DRYDOCK_SANDBOX}\nrun true \\\n  # a comment inside the continuation \\\n\n  && true\nCoPy\t--chown=0:0 \\\n\t--from=${PRIVATE} /etc/drydock-marker /opt/stolen\n`,
    );
    expectRefused(
      await attempt(repo),
      /Dockerfile:7: COPY --from drydock-test-private:\w+ is not an image this repository may build on/,
    );
  });
});

describe("ONBUILD never runs unchecked", () => {
  it("an allowed base image with an ONBUILD COPY --from trigger is refused, as a FROM and as a devcontainer image", async () => {
    using byFrom = dockerfileRepo(`FROM ${TRIGGERED}\n`);
    expectRefused(
      await attempt(byFrom, [TRIGGERED]),
      /Dockerfile:1: FROM drydock-test-onbuild:\w+ has ONBUILD triggers \("COPY --from=drydock-test-private/,
    );
    using byImage = repoFor({ ".devcontainer/devcontainer.json": JSON.stringify({ image: TRIGGERED }) });
    expectRefused(
      await attempt(byImage, [TRIGGERED]),
      /devcontainer\.json:1: image drydock-test-onbuild:\w+ has ONBUILD triggers/,
    );
  });

  it("an ONBUILD in the repository's Dockerfile is refused (it would run in the environment's build on it)", async () => {
    using repo = dockerfileRepo(
      `${FROM_SANDBOX}ONBUILD\tCOPY --from=${PRIVATE} /etc/drydock-marker /opt/stolen\n`,
    );
    expectRefused(await attempt(repo), /Dockerfile:3: ONBUILD is refused/);
  });
});

describe("the builder reads the images drydock checked, by id", () => {
  it("a tag moved to a private image between the check and the build changes nothing: the build uses the id checked", async () => {
    using repo = dockerfileRepo(`FROM ${ALLOWED}\nCOPY --from=${ALLOWED} /etc/drydock-marker /opt/stolen\n`);
    const engine = await testEngine();
    const envs = new EnvironmentImages(engine, { baseImage: sandboxImage(), allowBaseImages: [ALLOWED] });
    const checked = await envs.status(repo.path);
    const allowedId = await engine.imageId(ALLOWED);
    await engine.tag(PRIVATE, ALLOWED);
    try {
      const built = await envs.imageFor({ repo: repo.path, onLine: () => undefined });
      await using box = await testSession(repo.path, { image: built.image });
      const read = async (path: string) => (await box.bash(`cat ${path}`, {})).output.trim();
      expect(await read("/etc/drydock-marker")).toBe("allowed");
      expect(await read("/opt/stolen")).toBe("allowed");
      expect(checked.builderDockerfile).toBe(
        `FROM ${allowedId}\nCOPY --from=${allowedId} /etc/drydock-marker /opt/stolen\n`,
      );
    } finally {
      await engine.tag(allowedId!, ALLOWED);
    }
  });
});

describe("a failure in the Dockerfile drydock wrote names the repository's line", () => {
  it("a failing RUN is reported at its line in the repository's Dockerfile, as the builder ran it", async () => {
    using repo = dockerfileRepo(`${FROM_SANDBOX}# a comment\nRUN true \\\n  && exit 3\n`);
    const outcome = await attempt(repo);
    expect(outcome.error).toMatch(
      /^\.devcontainer\/Dockerfile:4: the instruction failed with exit code 3: RUN true   && exit 3\n/,
    );
  });
});

describe("the build context cannot stand in for the Dockerfile drydock wrote", () => {
  it("a .drydock.Dockerfile in the context (drydock's name for the file it sends) is not what the builder reads", async () => {
    using repo = repoFor({
      ".devcontainer/devcontainer.json": '{"build": {"dockerfile": "Dockerfile", "context": ".."}}',
      ".devcontainer/Dockerfile": `${FROM_SANDBOX}USER root\nRUN echo checked > /opt/stolen\n`,
      ".drydock.Dockerfile": `FROM ${PRIVATE}\nUSER root\nRUN cp /etc/drydock-marker /opt/stolen\n`,
    });
    const outcome = await attempt(repo);
    expect(outcome.error).toBeUndefined();
    expect(outcome.stolen).toBe("checked");
    expect(outcome.marker ?? "").not.toContain(SECRET);
  });
});

describe("an operator's registry-wide allowance covers images by name, never by id", () => {
  it("FROM a private image's short id, or COPY --from its full id, under --allow-base-image docker.io/* is refused", async () => {
    const id = (await (await testEngine()).imageId(PRIVATE))!;
    const short = id.replace(/^sha256:/, "").slice(0, 12);
    using byShort = dockerfileRepo(`FROM ${short}\n`);
    expectRefused(
      await attempt(byShort, ["docker.io/*"]),
      new RegExp(
        `Dockerfile:1: FROM ${short} is not an image tagged ${short}: the engine found it by its id`,
      ),
    );
    using byFull = dockerfileRepo(`${FROM_SANDBOX}COPY --from=${id} /etc/drydock-marker /opt/stolen\n`);
    expectRefused(
      await attempt(byFull, ["docker.io/*"]),
      /Dockerfile:3: COPY --from sha256:\w+ is not an image tagged/,
    );
  });
});
