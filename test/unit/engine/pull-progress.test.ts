import { describe, expect, it } from "vitest";
import { PullProgress } from "../../../src/engine/pull-progress.js";

describe("PullProgress", () => {
  it("tells each layer's steps once and a download at each quarter, not every chunk", () => {
    const progress = new PullProgress("127.0.0.1:5000/py:1");
    const events = [
      { status: "Pulling from py", id: "1" },
      { status: "Pulling fs layer", id: "abc" },
      { status: "Waiting", id: "abc" },
      ...[0, 10, 20, 30, 60, 99].map((mb) => ({
        status: "Downloading",
        id: "abc",
        progressDetail: { current: mb * 1024 * 1024, total: 100 * 1024 * 1024 },
      })),
      { status: "Pull complete", id: "abc" },
      { status: "Digest: sha256:0123" },
      { status: "Status: Downloaded newer image for 127.0.0.1:5000/py:1" },
    ];
    const lines = events.map((e) => progress.line(e)).filter((l) => l !== undefined);
    expect(lines).toEqual([
      "pulling 127.0.0.1:5000/py:1: Pulling from py",
      "pulling 127.0.0.1:5000/py:1: layer abc: Pulling fs layer",
      "pulling 127.0.0.1:5000/py:1: layer abc: Downloading 0.0 / 100.0 MB",
      "pulling 127.0.0.1:5000/py:1: layer abc: Downloading 30.0 / 100.0 MB",
      "pulling 127.0.0.1:5000/py:1: layer abc: Downloading 60.0 / 100.0 MB",
      "pulling 127.0.0.1:5000/py:1: layer abc: Downloading 99.0 / 100.0 MB",
      "pulling 127.0.0.1:5000/py:1: layer abc: Pull complete",
      "pulling 127.0.0.1:5000/py:1: Digest: sha256:0123",
      "pulling 127.0.0.1:5000/py:1: Status: Downloaded newer image for 127.0.0.1:5000/py:1",
    ]);
  });
});
