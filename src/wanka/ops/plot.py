"""Plot ETTR against the checkpoint interval and against job size (matplotlib, an optional extra)."""

from __future__ import annotations

import os
from pathlib import Path

from wanka.errors import WankaError
from wanka.ops.sweep import SweepPoint, sweep_checkpoint_interval, sweep_cluster_size
from wanka.spec import Scenario

__all__ = ["plot_ettr"]


def plot_ettr(
    scenario: Scenario, *, step_time_s: float, path: str | Path, replicas: int = 300, seed: int = 0
) -> tuple[list[SweepPoint], list[SweepPoint]]:
    """Write a two-panel PNG/SVG; returns the (interval, size) sweeps it drew."""
    try:
        import matplotlib  # type: ignore[import-not-found, unused-ignore]

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise WankaError("plots need matplotlib: pip install wanka[report]") from None
    p = Path(path)
    by_tau = sweep_checkpoint_interval(scenario, step_time_s=step_time_s, replicas=replicas, seed=seed)
    by_size = sweep_cluster_size(scenario, step_time_s=step_time_s, replicas=replicas, seed=seed)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot([q.x / 60 for q in by_tau], [q.ettr.mean for q in by_tau], "o-", label="Monte Carlo mean")
    a.fill_between(
        [q.x / 60 for q in by_tau], [q.ettr.p5 for q in by_tau], [q.ettr.p95 for q in by_tau], alpha=0.2, label="p5–p95"
    )
    a.plot([q.x / 60 for q in by_tau], [q.ettr_analytic for q in by_tau], "--", label="closed form")
    a.set_xscale("log")
    a.set_xlabel("checkpoint interval (min)")
    a.set_ylabel("ETTR")
    a.set_title("ETTR vs checkpoint interval")
    a.legend()
    b.plot([q.x for q in by_size], [q.ettr.mean for q in by_size], "o-", label="Monte Carlo mean")
    b.fill_between([q.x for q in by_size], [q.ettr.p5 for q in by_size], [q.ettr.p95 for q in by_size], alpha=0.2)
    b.axvline(scenario.gpus, color="grey", lw=0.8, ls=":", label=f"this job ({scenario.gpus:,} GPUs)")
    b.set_xscale("log")
    b.set_xlabel("GPUs in the job")
    b.set_ylabel("ETTR")
    b.set_title("ETTR vs cluster size (interval re-optimised)")
    b.legend()
    fig.suptitle(f"{scenario.name}: effective training time ratio")
    fig.tight_layout()
    tmp = p.with_name(f".{p.name}.tmp{p.suffix}")  # written whole, then renamed over the target
    try:
        fig.savefig(tmp)
        os.replace(tmp, p)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise WankaError(f"cannot write plot {p}: {e.strerror}") from None
    finally:
        plt.close(fig)
    return by_tau, by_size
