import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { aiderServiceFromOptions } from "../../../src/tools/aider/aider-config.js";
import { InvalidArgumentError } from "../../../src/util/errors.js";

const dir = mkdtempSync(join(tmpdir(), "drydock-aider-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("aiderServiceFromOptions", () => {
  it("starts with no key and no model given, and refuses aider calls naming no model, saying where a key goes", () => {
    const service = aiderServiceFromOptions({}, {});
    expect(() => service.chooseModel()).toThrow(
      /^model: no model provider key on the host.*ANTHROPIC_API_KEY/,
    );
    expect(() => service.prepare({ prompt: "fix it", editable: ["a.py"] })).toThrow(/no model provider key/);
    expect(service.chooseModel("openai/drydock-offline")).toMatchObject({ offline: true });
    expect(aiderServiceFromOptions({ llm: "offline" }, {}).chooseModel()).toMatchObject({ offline: true });
  });

  it("takes the default model from --model, then DRYDOCK_MODEL, then the .env file", () => {
    const envFile = join(dir, "model.env");
    writeFileSync(envFile, "DRYDOCK_MODEL=sonnet\nANTHROPIC_API_KEY=sk-ant-file\nOPENAI_API_KEY=sk-file\n");
    expect(aiderServiceFromOptions({ envFile }, {}).chooseModel().model).toBe("sonnet");
    expect(aiderServiceFromOptions({ envFile }, { DRYDOCK_MODEL: "gpt-4o" }).chooseModel().model).toBe(
      "gpt-4o",
    );
    expect(
      aiderServiceFromOptions({ envFile, model: "gpt-4o-mini" }, { DRYDOCK_MODEL: "gpt-4o" }).chooseModel()
        .model,
    ).toBe("gpt-4o-mini");
  });

  it("picks the default for the host's key when no model is named", () => {
    expect(aiderServiceFromOptions({}, { OPENAI_API_KEY: "sk-x" }).chooseModel()).toMatchObject({
      model: "gpt-4o",
      provider: "openai",
    });
  });

  it("refuses at start a default model that cannot be served, naming the fix", () => {
    expect(() => aiderServiceFromOptions({ model: "gpt-4o" }, {})).toThrow(/OPENAI_API_KEY/);
    expect(() =>
      aiderServiceFromOptions({ model: "gpt-4o", llm: "offline" }, { OPENAI_API_KEY: "sk-x" }),
    ).toThrow(/--llm offline/);
    expect(() => aiderServiceFromOptions({ model: "acme/unknown-model" }, {})).toThrow(/list_models/);
  });

  it("reads server-wide aider options and endpoint overrides from the environment", () => {
    const service = aiderServiceFromOptions({}, { DRYDOCK_AIDER_OPTIONS: '{"map_tokens":0}' });
    expect(service.config.options).toEqual({ map_tokens: 0 });
    expect(() => aiderServiceFromOptions({}, { DRYDOCK_AIDER_OPTIONS: '{"pretty":true}' })).toThrow(
      InvalidArgumentError,
    );
    expect(() => aiderServiceFromOptions({}, { DRYDOCK_OPENAI_BASE_URL: "not a url" })).toThrow(
      /DRYDOCK_OPENAI_BASE_URL/,
    );
  });

  it("parses --llm and reports a bad mode", () => {
    expect(aiderServiceFromOptions({ llm: "record:x.jsonl" }, {}, dir).config.mode).toEqual({
      kind: "record",
      file: join(dir, "x.jsonl"),
    });
    expect(() => aiderServiceFromOptions({ llm: "sometimes" }, {})).toThrow(/--llm/);
  });
});

describe("AiderService.prepare", () => {
  const service = aiderServiceFromOptions(
    { llm: "offline" },
    { DRYDOCK_AIDER_OPTIONS: '{"map_tokens":0,"edit_format":"whole"}' },
  );

  it("resolves files, model and merged options before anything runs", () => {
    const call = service.prepare({
      prompt: "fix greet",
      editable: ["greet.py"],
      readonly: ["test_greet.py"],
      options: { edit_format: "diff" },
    });
    expect(call.files).toEqual({ editable: ["greet.py"], readonly: ["test_greet.py"] });
    expect(call.choice.model).toBe("openai/drydock-offline");
    expect(call.options).toEqual({ map_tokens: 0, edit_format: "diff" });
  });

  it("refuses an empty prompt, bad paths and unknown models with the field named", () => {
    expect(() => service.prepare({ prompt: "  ", editable: ["a.py"] })).toThrow(/ai_coding_prompt/);
    expect(() => service.prepare({ prompt: "x", editable: ["../../etc/passwd"] })).toThrow(/outside|refused/);
    expect(() => service.prepare({ prompt: "x", editable: ["a.py"], model: "no-such-model" })).toThrow(
      /^model: .*list_models/,
    );
  });
});
