"""mini-swe-agent environment: the agent loop's commands run in a drydock box.

In a mini-swe-agent config (``mini -c drydock.yaml`` or ``DefaultAgent(model, env, ...)``)::

    environment:
      environment_class: drydock.mini_swe_agent.DrydockEnvironment
      repo: /path/to/repo          # or directory: ..., or nothing for an empty /workspace
      timeout: 60

Each ``execute`` runs ``bash -lc COMMAND`` in the box with stdout and stderr merged in order,
like mini-swe-agent's docker environment; the box has no network unless ``egress`` names hosts.
"""

from __future__ import annotations

import logging
import os
import platform
from typing import Any

from pydantic import BaseModel, Field

from ._sync import Drydock, Sandbox
from .errors import DrydockError


class DrydockEnvironmentConfig(BaseModel):
    repo: str | None = None
    """A git repository copied into ``/workspace`` (default: an empty one, or the server's ``--repo``)."""
    ref: str | None = None
    directory: str | None = None
    """A local directory copied into ``/workspace`` instead of a repository."""
    image: str | None = None
    """The box image (default: drydock's sandbox image)."""
    cwd: str = "/workspace"
    env: dict[str, str] = {}
    forward_env: list[str] = []
    """Host variables passed to each command when they are set (``env`` wins)."""
    timeout: int = 30
    """Seconds a command may run (it is then stopped as a whole)."""
    interpreter: list[str] = ["bash", "-c"]
    """Not a login shell by default: on Debian, /etc/profile resets PATH, and drydock's sandbox
    image keeps its Python venv and tools on the image's PATH."""
    egress: list[str] | None = None
    """Hosts the box may reach over HTTPS (default none: no network)."""
    runtime: str | None = None
    """``runsc`` for gVisor."""
    url: str | None = None
    """A running ``drydock serve --http`` instead of one started for this environment."""
    token: str | None = Field(default=None, repr=False)
    """That server's token (default ``DRYDOCK_TOKEN``); never in a repr, the template vars or
    the trajectory."""
    state_dir: str | None = None
    cli: str | None = None


class DrydockEnvironment:
    def __init__(self, *, config_class: type = DrydockEnvironmentConfig, logger: logging.Logger | None = None, **kwargs: Any) -> None:
        self.logger = logger or logging.getLogger("minisweagent.environment")
        self.config = config_class(**kwargs)
        self._drydock: Drydock | None = None
        self.box: Sandbox | None = None
        config = self.config
        if config.url:
            self._drydock = Drydock.connect(config.url, config.token)
        else:
            repo = str(os.path.abspath(config.repo)) if config.repo else None
            self._drydock = Drydock.local(
                cli=config.cli,
                state_dir=config.state_dir,
                repo=repo,
                image=config.image,
                egress=config.egress,
                runtime=config.runtime,
                pool=0,
            )
        try:
            self.box = self._drydock.create(
                config.repo if config.url else None,
                ref=config.ref,
                directory=config.directory,
            )
        except BaseException:
            self._drydock.close()
            self._drydock = None
            raise
        self.logger.info("drydock box %s (session %s)", self.box.info.box, self.box.id)

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        from minisweagent.utils.serialize import recursive_merge

        return recursive_merge(self.config.model_dump(exclude={"token"}), platform.uname()._asdict(), kwargs)

    def serialize(self) -> dict[str, Any]:
        return {
            "info": {
                "config": {
                    "environment": self.config.model_dump(mode="json", exclude={"token"}),
                    "environment_type": f"{self.__class__.__module__}.{self.__class__.__name__}",
                }
            }
        }

    def execute(self, action: dict[str, Any], cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        command = action.get("command", "")
        assert self.box is not None, "the environment was cleaned up"
        env = {k: v for k in self.config.forward_env if (v := os.getenv(k)) is not None}
        env.update(self.config.env)
        limit = timeout or self.config.timeout
        try:
            # stderr joins stdout in order, as mini-swe-agent's docker environment gives it.
            result = self.box.run(
                ["bash", "-c", 'exec "$@" 2>&1', "drydock", *self.config.interpreter, command],
                cwd=cwd or self.config.cwd,
                env=env or None,
                timeout=limit,
                tty=False,
                max_output_bytes=1_000_000,
            )
        except DrydockError as error:
            output: dict[str, Any] = {
                "output": "",
                "returncode": -1,
                "exception_info": f"An error occurred while executing the command: {error}",
                "extra": {"exception_type": type(error).__name__, "exception": str(error)},
            }
        else:
            if result.timed_out:
                output = {
                    "output": result.stdout,
                    "returncode": -1,
                    "exception_info": f"An error occurred while executing the command: Command '{command}' timed out after {limit} seconds",
                    "extra": {"exception_type": "TimeoutExpired", "exception": f"timed out after {limit} seconds"},
                }
            else:
                output = {"output": result.stdout, "returncode": result.exit_code, "exception_info": ""}
        self._check_finished(output)
        return output

    def _check_finished(self, output: dict[str, Any]) -> None:
        from minisweagent.exceptions import Submitted

        lines = output.get("output", "").lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" and output["returncode"] == 0:
            submission = "".join(lines[1:])
            raise Submitted(
                {
                    "role": "exit",
                    "content": submission,
                    "extra": {"exit_status": "Submitted", "submission": submission},
                }
            )

    def cleanup(self) -> None:
        """Removes the box (and stops a server started for it)."""
        drydock, self._drydock = self._drydock, None
        box, self.box = self.box, None
        if drydock is not None:
            try:
                if box is not None:
                    box.close()
            finally:
                drydock.close()

    def __del__(self) -> None:
        try:
            self.cleanup()
        except Exception:  # noqa: BLE001
            pass
