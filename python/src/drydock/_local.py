"""``drydock serve --http`` started for the caller on a free loopback port, and stopped again."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Sequence
from pathlib import Path

from .errors import ServerStartError

START_TIMEOUT_S = 120.0
DEFAULT_TOOLS = "core,checkpoints"
# Above Inspect's default exec output limit (10 MiB), so its limit is the one that applies.
DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024 * 1024


def find_cli(cli: str | Sequence[str] | None = None) -> list[str]:
    """The command that runs drydock: ``cli``, else ``DRYDOCK_CLI``, else ``drydock`` on PATH.

    A path ending in ``.js`` (a checkout's ``dist/cli/main.js``) runs with ``node``.
    """
    if cli is None:
        cli = os.environ.get("DRYDOCK_CLI") or shutil.which("drydock")
    if cli is None:
        raise ServerStartError(
            "drydock is not on PATH: install it (`npm link` in a drydock checkout, or the packed "
            "tarball), set DRYDOCK_CLI to its dist/cli/main.js, or pass cli=..., or reach a running "
            "server with Drydock.connect(url, token)"
        )
    if isinstance(cli, str):
        parts = [cli]
    else:
        parts = list(cli)
    if len(parts) == 1 and parts[0].endswith((".js", ".mjs")):
        node = shutil.which("node")
        if node is None:
            raise ServerStartError(f"{parts[0]} needs Node.js (`node`) on PATH")
        parts = [node, parts[0]]
    return parts


def make_scratch_repo(directory: str | None = None) -> str:
    """An empty git repository with one empty commit: what a box on no repository starts from."""
    root = directory or tempfile.mkdtemp(prefix="drydock-scratch-")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q", root], check=True, env=env)
    subprocess.run(
        [
            "git",
            "-C",
            root,
            "-c",
            "user.name=drydock",
            "-c",
            "user.email=drydock@localhost",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "empty workspace",
        ],
        check=True,
        env=env,
    )
    return root


class LocalServer:
    """One ``drydock serve --http`` process of ours; ``stop()`` ends it and its boxes."""

    def __init__(
        self,
        *,
        cli: str | Sequence[str] | None = None,
        state_dir: str | None = None,
        repo: str | None = None,
        allow_repos: Sequence[str] = (),
        image: str | None = None,
        egress: Sequence[str] | None = None,
        runtime: str | None = None,
        tools: str = DEFAULT_TOOLS,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        pool: int | None = None,
        memory_mb: int | None = None,
        cpus: float | None = None,
        max_sessions: int | None = None,
        no_env: bool = False,
        extra_args: Sequence[str] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        self._owned: list[str] = []
        self.state_dir = state_dir or self._temp("drydock-state-")
        Path(self.state_dir).mkdir(parents=True, exist_ok=True)
        if repo is None:
            repo = make_scratch_repo(self._temp("drydock-repo-"))
        self.repo = str(Path(repo).resolve())
        self.image = image
        args = find_cli(cli) + [
            "serve",
            "--http",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--repo",
            self.repo,
            "--tools",
            tools,
            "--max-output-bytes",
            str(max_output_bytes),
        ]
        for allowed in allow_repos:
            args += ["--allow-repo", str(Path(allowed).resolve())]
        if image:
            args += ["--image", image]
        if egress:
            args += ["--egress", ",".join(egress)]
        if runtime:
            args += ["--runtime", runtime]
        if pool is not None:
            args += ["--pool", str(pool)]
        if memory_mb is not None:
            args += ["--memory-mb", str(memory_mb)]
        if cpus is not None:
            args += ["--cpus", str(cpus)]
        if max_sessions is not None:
            args += ["--max-sessions", str(max_sessions)]
        if no_env:
            args.append("--no-env")
        args += list(extra_args)
        self.args = args
        self.log_path = os.path.join(self.state_dir, f"serve-{os.getpid()}-{id(self):x}.log")
        child_env = {**os.environ, **(env or {}), "DRYDOCK_STATE_DIR": self.state_dir}
        # Our own token file is what we read: a DRYDOCK_TOKEN of the caller's is not passed on.
        child_env.pop("DRYDOCK_TOKEN", None)
        self._log = open(self.log_path, "wb")
        try:
            self.process = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, env=child_env
            )
        except OSError as error:
            self._log.close()
            raise ServerStartError(f"could not run {args[0]}: {error}") from None
        self.url = ""
        self._token = ""
        _LIVE.add(self)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def __repr__(self) -> str:
        return f"LocalServer(url={self.url!r}, state_dir={self.state_dir!r}, pid={self.process.pid})"

    @property
    def token(self) -> str:
        return self._token

    def _temp(self, prefix: str) -> str:
        path = tempfile.mkdtemp(prefix=prefix)
        self._owned.append(path)
        return path

    def log_text(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        token_file = None
        while time.monotonic() < deadline:
            text = self.log_text()
            url = re.search(r"serving MCP on (http://\S+)", text)
            written = re.search(r"bearer token written to (.+?) \(mode", text)
            if url and written:
                self.url = url.group(1)
                token_file = written.group(1)
                break
            if self.process.poll() is not None:
                raise ServerStartError(
                    f"drydock serve exited with status {self.process.returncode} before it served; "
                    f"its log ({self.log_path}):\n{text[-4000:]}"
                )
            time.sleep(0.1)
        else:
            raise ServerStartError(
                f"drydock serve did not print its address within {START_TIMEOUT_S:.0f} s; its log "
                f"({self.log_path}):\n{self.log_text()[-4000:]}"
            )
        self._token = Path(token_file).read_text().strip()

    def _prune(self) -> None:
        try:
            subprocess.run(
                self.args[: self.args.index("serve")] + ["sessions", "prune", "--yes"],
                env={**os.environ, "DRYDOCK_STATE_DIR": self.state_dir},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=120,
            )
        except (OSError, subprocess.SubprocessError):
            pass

    def stop(self, timeout_s: float = 60.0) -> None:
        """SIGTERM: the server removes every box it owns, then exits."""
        process = self.process
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if not self._log.closed:
            self._log.close()
        if process.returncode != 0:
            # It died rather than stopped (killed, crashed): its boxes are still on the engine.
            # drydock removes the boxes of a dead drydock of this state directory.
            self._prune()
        _LIVE.discard(self)
        for path in self._owned:
            shutil.rmtree(path, ignore_errors=True)
        self._owned = []


_LIVE: weakref.WeakSet[LocalServer] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE):
        try:
            server.stop(timeout_s=30)
        except Exception:  # noqa: BLE001
            pass
