import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { registerMockLlmCommand, runMockLlm } from "../../../src/cli/mock-llm-command.js";
import { tempDir } from "./gateway-fixture.js";
import { send } from "./http-client.js";

describe("drydock mock-llm", () => {
  it("serves the given script on loopback until told to stop, and says where", async () => {
    using dir = tempDir();
    const script = join(dir.path, "script.json");
    writeFileSync(script, JSON.stringify([{ match: "ping", reply: "pong" }]));
    const lines: string[] = [];
    let stop: () => void = () => undefined;
    const until = new Promise<void>((resolve) => (stop = resolve));
    let announced: (url: string) => void = () => undefined;
    const url = new Promise<string>((resolve) => (announced = resolve));
    const running = runMockLlm({ port: "0", host: "127.0.0.1", script }, until, (line) => {
      lines.push(line);
      const found = /listening on (\S+)/.exec(line)?.[1];
      if (found) announced(found);
    });
    const baseUrl = await url;
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const reply = await send(
      { baseUrl },
      {
        path: "/chat/completions",
        body: { model: "drydock-offline", messages: [{ role: "user", content: "ping" }] },
      },
    );
    expect(JSON.parse(reply.body).choices[0].message.content).toBe("pong");
    stop();
    await running;
    await expect(send({ baseUrl }, { path: "/models" })).rejects.toThrow(/ECONNREFUSED/);
    expect(lines.join("\n")).toContain(`1 rules from ${script}`);
  });

  it("is registered with its options and refuses a bad port or script before listening", async () => {
    const program = new Command().exitOverride();
    registerMockLlmCommand(program);
    const command = program.commands.find((c) => c.name() === "mock-llm");
    expect(command?.options.map((option) => option.long)).toEqual(["--port", "--host", "--script"]);
    await expect(program.parseAsync(["node", "drydock", "mock-llm", "--port", "http"])).rejects.toThrow(
      /--port: "http" is not a port number/,
    );
    await expect(
      program.parseAsync(["node", "drydock", "mock-llm", "--script", "/nonexistent/script.json"]),
    ).rejects.toThrow(/\/nonexistent\/script\.json could not be read/);
  });
});
