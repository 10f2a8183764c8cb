"""Inspect sample start and exec round trip: sandbox="drydock" against Inspect's docker sandbox,
interleaved (drydock, docker, drydock, docker, ...), on the same image (drydock's sandbox image).

    venv=$(bash scripts/install-python-package.sh)
    DRYDOCK_CLI=$PWD/dist/cli/main.js "$venv/bin/python" bench/inspect-sandbox.py --rounds 5 --execs 20

Sample start is ``sample_init`` until the sandbox answers its first ``exec``; sample cleanup is
timed too. Exec round trip is ``exec(["true"])`` on a ready sandbox. Prints medians and ranges
as JSON. Inspect's docker sandbox checks for Docker Engine 24.0.6; on an older engine (Debian 12
has 20.10) this script relaxes that one check, as the tests do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

COMPOSE = Path(__file__).resolve().parents[1] / "python" / "tests" / "fixtures" / "compose.yaml"


def _relax_docker_engine_check() -> None:
    import inspect_ai.util._sandbox.docker.prereqs as prereqs

    original = prereqs.validate_docker_engine

    async def lenient(version: str = "20.10.0") -> None:
        await original("20.10.0")

    prereqs.validate_docker_engine = lenient


async def _one(cls, config, execs: int) -> dict[str, float | list[float]]:
    start = time.perf_counter()
    envs = await cls.sample_init("bench", config, {})
    env = next(iter(envs.values()))
    first = await env.exec(["true"])
    assert first.success, first
    ready = time.perf_counter() - start
    trips = []
    for _ in range(execs):
        t = time.perf_counter()
        await env.exec(["true"])
        trips.append(time.perf_counter() - t)
    t = time.perf_counter()
    await cls.sample_cleanup("bench", config, envs, False)
    return {"start_s": ready, "exec_s": trips, "cleanup_s": time.perf_counter() - t}


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(values) * 1000, 1),
        "min_ms": round(min(values) * 1000, 1),
        "max_ms": round(max(values) * 1000, 1),
        "n": len(values),
    }


async def main(rounds: int, execs: int) -> dict[str, dict[str, dict[str, float]]]:
    from inspect_ai.util._sandbox.docker.docker import DockerSandboxEnvironment

    from drydock.inspect_sandbox import DrydockSandboxConfig, DrydockSandboxEnvironment

    _relax_docker_engine_check()
    providers = {
        "drydock": (DrydockSandboxEnvironment, DrydockSandboxConfig()),
        "docker": (DockerSandboxEnvironment, str(COMPOSE)),
    }
    for cls, config in providers.values():
        await cls.task_init("bench", config)
    results: dict[str, list[dict[str, float | list[float]]]] = {name: [] for name in providers}
    try:
        for _ in range(rounds):
            for name, (cls, config) in providers.items():  # interleaved
                results[name].append(await _one(cls, config, execs))
    finally:
        for cls, config in providers.values():
            await cls.task_cleanup("bench", config, True)
    return {
        name: {
            "sample_start": _summary([r["start_s"] for r in runs]),  # type: ignore[misc]
            "exec_round_trip": _summary([t for r in runs for t in r["exec_s"]]),  # type: ignore[union-attr]
            "sample_cleanup": _summary([r["cleanup_s"] for r in runs]),  # type: ignore[misc]
        }
        for name, runs in results.items()
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--execs", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.rounds, args.execs)), indent=2))
