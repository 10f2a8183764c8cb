import { describe, expect, it } from "vitest";
import {
  closeStdinFrame,
  execPath,
  frame,
  parseFrame,
  parseStatus,
  resizeFrame,
  upgradeFailure,
  withWorkdirAndEnv,
} from "../../../src/engine/kubernetes/kube-channel.js";

const status = (body: object): Buffer => frame(3, JSON.stringify(body));

// Status messages as a Kubernetes 1.37 API server sends them, under runc and runsc.
const EXIT_3 = {
  metadata: {},
  status: "Failure",
  message: "command terminated with non-zero exit code: command terminated with exit code 3",
  reason: "NonZeroExitCode",
  details: { causes: [{ reason: "ExitCode", message: "3" }] },
};
const internal = (message: string): object => ({
  metadata: {},
  status: "Failure",
  message: `Internal error occurred: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "1586e7": ${message}`,
  reason: "InternalError",
  code: 500,
});

describe("parseFrame", () => {
  it("splits stdout and stderr by their first byte", () => {
    expect(parseFrame(frame(1, "out"))).toEqual({ kind: "stdout", data: Buffer.from("out") });
    expect(parseFrame(frame(2, "err"))).toEqual({ kind: "stderr", data: Buffer.from("err") });
  });

  it("ignores each stream's empty opening frame and channels a client does not read", () => {
    expect(parseFrame(Buffer.from([1]))).toEqual({ kind: "ignored" });
    expect(parseFrame(Buffer.from([2]))).toEqual({ kind: "ignored" });
    expect(parseFrame(frame(4, "x"))).toEqual({ kind: "ignored" });
    expect(parseFrame(Buffer.from([255, 0]))).toEqual({ kind: "ignored" });
  });

  it("keeps every byte value of the data", () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const parsed = parseFrame(frame(1, all));
    expect(parsed.kind === "stdout" && parsed.data.equals(all)).toBe(true);
  });

  it("reads the exit status: Success is 0, NonZeroExitCode its ExitCode cause", () => {
    expect(parseFrame(status({ metadata: {}, status: "Success" }))).toEqual({
      kind: "status",
      status: { kind: "exited", exitCode: 0 },
    });
    expect(parseFrame(status(EXIT_3))).toEqual({ kind: "status", status: { kind: "exited", exitCode: 3 } });
  });
});

describe("parseStatus", () => {
  it("turns a status that is not JSON into an error, not an exception", () => {
    expect(parseStatus("<html>502 Bad Gateway</html>")).toEqual({
      kind: "error",
      message: expect.stringContaining("not JSON") as string,
    });
    expect(parseStatus("")).toMatchObject({ kind: "error" });
    expect(parseStatus("null")).toMatchObject({ kind: "error" });
    expect(parseStatus("42")).toMatchObject({ kind: "error" });
    expect(parseFrame(Buffer.from([3, 0xff, 0xfe]))).toMatchObject({
      kind: "status",
      status: { kind: "error" },
    });
  });

  it("turns an exit status without a usable code into an error", () => {
    const noCause = { ...EXIT_3, details: {} };
    expect(parseStatus(JSON.stringify(noCause))).toMatchObject({ kind: "error" });
    const badCode = { ...EXIT_3, details: { causes: [{ reason: "ExitCode", message: "three" }] } };
    expect(parseStatus(JSON.stringify(badCode))).toMatchObject({ kind: "error" });
    expect(parseStatus(JSON.stringify({ status: "Pending" }))).toMatchObject({ kind: "error" });
  });

  it("tells a program the runtime could not start, under runc and under runsc", () => {
    const runc = internal(
      'OCI runtime exec failed: exec failed: unable to start container process: exec: "nonexistent-bin": executable file not found in $PATH',
    );
    expect(parseStatus(JSON.stringify(runc))).toEqual({
      kind: "not-started",
      message: expect.stringMatching(/^error executing command.*executable file not found/) as string,
    });
    const runsc = internal(
      'OCI runtime exec failed: executing processes for container: executing command "x" in sandbox: error finding executable "x" in PATH [/bin]: no such file or directory',
    );
    expect(parseStatus(JSON.stringify(runsc))).toMatchObject({ kind: "not-started" });
    const denied = internal(
      'OCI runtime exec failed: exec failed: unable to start container process: exec: "/etc/passwd": permission denied',
    );
    expect(parseStatus(JSON.stringify(denied))).toMatchObject({ kind: "not-started" });
  });

  it("tells a container that is gone from one whose program failed", () => {
    expect(parseStatus(JSON.stringify(internal("container not found")))).toMatchObject({ kind: "gone" });
    expect(parseStatus(JSON.stringify(internal("cannot exec in a stopped container")))).toMatchObject({
      kind: "gone",
    });
    expect(parseStatus(JSON.stringify(internal("some other failure")))).toMatchObject({ kind: "error" });
  });
});

describe("upgradeFailure", () => {
  it("counts a missing pod, and a 400 naming a missing or stopped container, as gone", () => {
    const missing = JSON.stringify({
      kind: "Status",
      status: "Failure",
      message: 'pods "p" not found',
      code: 404,
    });
    expect(upgradeFailure(404, missing)).toEqual({ gone: true, message: '404: pods "p" not found' });
    const container = JSON.stringify({ message: "container nope is not valid for pod p" });
    expect(upgradeFailure(400, container).gone).toBe(true);
    const completed = JSON.stringify({
      message: "cannot exec into a container in a completed pod; current phase is Succeeded",
    });
    expect(upgradeFailure(400, completed).gone).toBe(true);
    // After the Pod is deleted the kubelet's refusal comes back as a 500.
    expect(upgradeFailure(500, JSON.stringify({ message: 'container not found ("box")' })).gone).toBe(true);
  });

  it("says in words when the API server cannot reach the node's kubelet", () => {
    const dialing = upgradeFailure(
      500,
      JSON.stringify({
        message: "error dialing backend: dial tcp 127.0.0.1:10250: connect: connection refused",
      }),
    );
    expect(dialing.gone).toBe(false);
    expect(dialing.message).toMatch(
      /^the API server could not reach the kubelet of the box's node \(500: error dialing backend: .*\): the node or its kubelet may be restarting; try again in a moment/,
    );
  });

  it("keeps other refusals apart, with a body that is not JSON as it is", () => {
    expect(upgradeFailure(403, JSON.stringify({ message: "forbidden" }))).toEqual({
      gone: false,
      message: "403: forbidden",
    });
    expect(upgradeFailure(502, "bad gateway")).toEqual({ gone: false, message: "502: bad gateway" });
    expect(upgradeFailure(500, "")).toEqual({ gone: false, message: "500: HTTP 500" });
  });
});

describe("frames sent", () => {
  it("closes stdin with [255, 0] and sends the size as Width and Height", () => {
    expect([...closeStdinFrame()]).toEqual([255, 0]);
    expect(resizeFrame(120, 50).toString("latin1")).toBe('\x04{"Width":120,"Height":50}');
  });

  it("asks for one command per argv word, the container and the streams", () => {
    const path = execPath("ns", "drydock-1", "box", ["sh", "-c", "echo a&b=c d"], {
      stdin: true,
      tty: false,
    });
    const url = new URL(path, "https://api");
    expect(url.pathname).toBe("/api/v1/namespaces/ns/pods/drydock-1/exec");
    expect(url.searchParams.getAll("command")).toEqual(["sh", "-c", "echo a&b=c d"]);
    expect(Object.fromEntries([...url.searchParams].filter(([k]) => k !== "command"))).toEqual({
      container: "box",
      stdin: "true",
      stdout: "true",
      stderr: "true",
      tty: "false",
    });
    const tty = new URL(execPath("ns", "p", "box", ["sh"], { stdin: false, tty: true }), "https://api");
    expect(tty.searchParams.get("stderr")).toBe("false");
    expect(tty.searchParams.get("tty")).toBe("true");
  });

  it("applies workdir and env through env by its absolute path, and leaves argv alone without them", () => {
    expect(withWorkdirAndEnv(["ls", "-l"], {})).toEqual(["ls", "-l"]);
    expect(withWorkdirAndEnv(["ls"], { workdir: "/workspace", env: { A: "1 2" } })).toEqual([
      "/usr/bin/env",
      "--chdir=/workspace",
      "--",
      "A=1 2",
      "ls",
    ]);
  });
});
