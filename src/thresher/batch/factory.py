"""Which runner a command asked for: ``--ray [ADDRESS]`` or ``--workers N`` threads.

Kept apart from both runners so that neither imports the other: the Ray runner
builds on :mod:`thresher.batch.runner`, and only this module knows both.
"""

from __future__ import annotations

from thresher.batch.runner import LocalRunner, Runner
from thresher.errors import ConfigError

__all__ = ["make_runner"]


def make_runner(workers: int = 1, ray: str | None = None, *, quiet: bool = False) -> Runner:
    """The runner a command asked for: ``--ray [ADDRESS]`` if given, else ``--workers N`` threads.

    Args:
        workers: threads of the local runner; with a local Ray instance, its CPUs
            when above 1 (else Ray counts the machine's).
        ray: None (local threads), ``"local"`` (start a local Ray instance) or a
            cluster address (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``).
        quiet: keep Ray's own log lines off stderr (``--json``).

    Raises:
        ConfigError: ``workers`` below 1.
        BackendUnavailableError: Ray is not installed, or the cluster is unreachable.
    """
    if workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {workers}")
    if ray is None:
        return LocalRunner(workers)
    from thresher.batch.ray_runner import RayRunner

    return RayRunner(ray, num_cpus=workers if workers > 1 else None, quiet=quiet)
