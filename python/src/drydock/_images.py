"""Box images made with ``drydock env build``: an environment definition (a Dockerfile, a dev
container or drydock's ``environment.yaml``) and Inspect's sandbox tools, each a layer on the
image below it. Builds are cached by drydock (an unchanged definition is not rebuilt)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

from ._local import find_cli, make_scratch_repo
from .errors import DrydockError

# Where Inspect looks for its sandbox tools (inspect_ai.util._sandbox._cli.SANDBOX_TOOLS_DIR).
INSPECT_TOOLS_DIR = "/var/tmp/.da7be258e003d428"

_TOOLS_DOCKERFILE = """\
ARG DRYDOCK_SANDBOX=drydock-sandbox:latest
FROM ${{DRYDOCK_SANDBOX}}
USER root
COPY inspect-sandbox-tools.tar.gz /tmp/inspect-sandbox-tools.tar.gz
RUN install -d -m 0700 -o {user} -g {user} {dir} \\
 && tar -xzf /tmp/inspect-sandbox-tools.tar.gz -C {dir} \\
 && chown -R {user}:{user} {dir} \\
 && rm -f /tmp/inspect-sandbox-tools.tar.gz \\
 && printf '%s\\n' '# drydock: login shells (bash --login, as Inspect runs bash) keep the image PATH' \\
      'PATH="/opt/drydock/bin:/opt/venv/bin:$PATH"' > /etc/profile.d/zz-drydock-path.sh
USER {user}
"""


class ImageBuildError(DrydockError):
    code = "image_build"


def _commit_all(repo: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "-C", repo, "add", "-A"], check=True, env=env)
    subprocess.run(
        ["git", "-C", repo, "-c", "user.name=drydock", "-c", "user.email=drydock@localhost",
         "-c", "commit.gpgsign=false", "commit", "-q", "-m", "environment"],
        check=True,
        env=env,
    )


def _env_build(repo: str, base: str | None, cli: str | list[str] | None, state_dir: str | None) -> str:
    # Built from a commit, the image is keyed by its tree: the same files reuse the same image.
    _commit_all(repo)
    args = find_cli(cli) + ["env", "build", "--repo", repo, "--ref", "HEAD"]
    if base:
        args += ["--image", base]
    env = dict(os.environ)
    if state_dir:
        env["DRYDOCK_STATE_DIR"] = state_dir
    done = subprocess.run(args, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        raise ImageBuildError(
            f"drydock env build failed (exit {done.returncode}):\n{(done.stderr or done.stdout)[-4000:]}"
        )
    return lines[-1].strip()


def build_environment_image(
    environment: str,
    *,
    base: str | None = None,
    cli: str | list[str] | None = None,
    state_dir: str | None = None,
) -> str:
    """Builds the environment a file defines and returns the image's tag.

    ``environment``: a ``Dockerfile`` (its directory is the build context; it builds on the
    sandbox image with ``FROM ${DRYDOCK_SANDBOX}``, or on an image the operator allows), a
    ``devcontainer.json`` (its directory is copied as ``.devcontainer``), or drydock's
    ``environment.yaml``.
    """
    source = Path(environment).resolve()
    if not source.is_file():
        raise ImageBuildError(f"environment: {environment} is not a file")
    repo = make_scratch_repo(tempfile.mkdtemp(prefix="drydock-envdef-"))
    try:
        name = source.name
        if name.endswith((".yaml", ".yml")) and not name.startswith("devcontainer"):
            target = Path(repo, ".drydock")
            target.mkdir()
            shutil.copy(source, target / "environment.yaml")
        elif name.endswith(".json"):
            shutil.copytree(source.parent, Path(repo, ".devcontainer"), dirs_exist_ok=True)
            if name != "devcontainer.json":
                shutil.copy(source, Path(repo, ".devcontainer", "devcontainer.json"))
        else:
            # A Dockerfile: its directory is the build context.
            shutil.copytree(source.parent, Path(repo, ".devcontainer"), dirs_exist_ok=True)
            Path(repo, ".devcontainer", "devcontainer.json").write_text(
                json.dumps({"build": {"dockerfile": name, "context": "."}})
            )
        return _env_build(repo, base, cli, state_dir)
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def inspect_tools_archive() -> Path | None:
    """The sandbox tools archive the installed inspect_ai ships for this machine, if any."""
    try:
        import inspect_ai
    except ImportError:
        return None
    root = Path(inspect_ai.__file__).parent
    try:
        version = (root / "tool" / "_sandbox_tools_utils" / "sandbox_tools_version.txt").read_text().strip()
    except OSError:
        return None
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    path = root / "binaries" / f"inspect-sandbox-tools-{arch}-v{version}"
    return path if path.is_file() else None


def build_inspect_tools_image(
    *,
    base: str | None = None,
    user: str = "agent",
    cli: str | list[str] | None = None,
    state_dir: str | None = None,
) -> str:
    """An image on ``base`` holding Inspect's sandbox tools where Inspect looks for them, owned
    by the box user (so ``text_editor()`` and ``bash_session()`` work: a drydock box's root file
    system is read-only and its user is not root, so Inspect cannot inject them at run time)."""
    archive = inspect_tools_archive()
    if archive is None:
        raise ImageBuildError(
            "the installed inspect_ai ships no sandbox tools archive for this machine "
            "(inspect_ai/binaries/inspect-sandbox-tools-ARCH-vN)"
        )
    repo = make_scratch_repo(tempfile.mkdtemp(prefix="drydock-inspect-tools-"))
    try:
        target = Path(repo, ".devcontainer")
        target.mkdir()
        shutil.copy(archive, target / "inspect-sandbox-tools.tar.gz")
        (target / "Dockerfile").write_text(_TOOLS_DOCKERFILE.format(user=user, dir=INSPECT_TOOLS_DIR))
        (target / "devcontainer.json").write_text(json.dumps({"build": {"dockerfile": "Dockerfile", "context": "."}}))
        return _env_build(repo, base, cli, state_dir)
    finally:
        shutil.rmtree(repo, ignore_errors=True)
