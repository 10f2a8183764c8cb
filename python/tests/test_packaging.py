"""The package builds as a wheel that carries its types and its Inspect entry point, and Inspect
finds sandbox="drydock" through that entry point alone."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def test_wheel_builds_with_types_and_entry_point(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(PACKAGE)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("drydock_sandbox-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert "drydock/py.typed" in names
        assert {"drydock/__init__.py", "drydock/inspect_sandbox.py", "drydock/mini_swe_agent.py", "drydock/swerex.py"} <= names
        assert not any("tests/" in n or "__pycache__" in n for n in names)
        info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        assert "[inspect_ai]\ndrydock = drydock.inspect_sandbox" in zf.read(info).decode()
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert "Requires-Dist: mcp<3,>=2.3.0" in metadata
        assert "Provides-Extra: inspect" in metadata


def test_inspect_finds_the_provider_through_its_entry_point() -> None:
    code = (
        "from inspect_ai._util.entrypoints import ensure_entry_points\n"
        "from inspect_ai.util._sandbox.registry import registry_find_sandboxenv\n"
        "ensure_entry_points()\n"
        "print(registry_find_sandboxenv('drydock').__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "DrydockSandboxEnvironment"
