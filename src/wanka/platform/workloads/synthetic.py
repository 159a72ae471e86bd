"""Synthetic LLM-cluster workloads fit to the Acme summaries (``acme-seren``, ``acme-kalos``).

Fit, from one row of the Acme ``cluster_summary.csv`` (Hu et al., NSDI '24) only:

- **job size** (GPUs): powers of two ``1 … max_gpu``. ``P(1) = single_gpu_share`` (an assumption;
  the summary's median of 1 GPU only says it is ≥ 0.5), the rest ``P(2^k) ∝ 2^(−α·k)`` with ``α``
  solved so the mean equals ``avg_gpu_num``;
- **run time**: log-normal with the summary's median and mean, ``σ² = 2·ln(mean/median)``
  (log-normal moments), clipped to ``max_run_time_gpu``;
- **size–run-time dependence**: a Gaussian copula with correlation ``ρ`` solved so the mean
  GPU-time per job equals the summary's (complete + cancelled + failed GPU-time) / GPU jobs. With
  size bucket edges ``b_k`` in the latent normal, ``E[size·run] = e^(μ+σ²/2) Σ_k 2^k
  (Φ(b_(k+1) − ρσ) − Φ(b_k − ρσ))`` (conditional log-normal mean);
- **arrivals**: Poisson, rate set so the offered load (GPU-seconds asked per second over the
  cluster's GPUs) equals ``load``: the workload is *scaled to the cluster* by its arrival rate;
  job sizes keep the source's (capped at the cluster). The default ``load`` is the source cluster's
  own occupancy, its GPU-time over GPUs × trace span (:data:`ACME_CLUSTERS`): Seren 0.59, Kalos 0.21;
- **warm start**: the cluster starts in steady state, not empty. Jobs running at t = 0 are drawn
  as an M/G/∞ system holds them (a job is in the system with probability ∝ its run time; its elapsed
  part is uniform, so its residual run time is ``run × U(0, 1)``) until they occupy ``load`` of the
  GPUs. Without it, a few thousand arrivals on a large cluster end before the long jobs, which carry
  most GPU-time, have started: the cluster looks idle;
- tenants: ``tenants`` names with Zipf(1) weights; priority 1 for jobs of ≥ 8 nodes, else 0;
  tensor parallelism ``tp = min(gpus, 8, scale-up domain)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from wanka.errors import SpecError
from wanka.platform.cluster import Cluster
from wanka.platform.jobs import Job, Workload
from wanka.platform.workloads.summaries import TraceSummary, trace_summary
from wanka.spec import ClusterSpec

__all__ = ["SYNTHETIC_WORKLOADS", "LlmWorkloadFit", "fit_llm_workload", "synthetic_workload"]

SYNTHETIC_WORKLOADS = {"acme-seren": "acme-seren", "acme-kalos": "acme-kalos"}
# GPUs and trace span of the Acme clusters (Hu et al., NSDI '24, Sec. 2: Seren 286 × 8 A100, Kalos 302 × 8
# A100, 4,704 in all; AcmeTrace README: jobs from March to August 2023; the Kalos trace starts in May).
ACME_CLUSTERS: dict[str, tuple[int, float]] = {
    "acme-seren": (2288, 184 * 86400.0),  # 2023-03-01 .. 2023-08-31
    "acme-kalos": (2416, 123 * 86400.0),  # 2023-05-01 .. 2023-08-31
}
MAX_SYNTHETIC_JOBS = 2_000_000
_N = NormalDist()


@dataclass(frozen=True)
class LlmWorkloadFit:
    """Fitted distributions of a synthetic LLM-cluster workload."""

    source: str
    sizes: np.ndarray  # GPUs, powers of two
    probs: np.ndarray
    alpha: float
    run_mu: float  # ln of median run time (s)
    run_sigma: float
    rho: float  # latent correlation of size and run time
    max_run_s: float
    gpu_s_per_job: float  # model E[size × run], before clipping
    notes: tuple[str, ...]

    @property
    def mean_gpus(self) -> float:
        return float((self.sizes * self.probs).sum())


def _size_probs(p1: float, alpha: float, k_max: int) -> np.ndarray:
    k = np.arange(1, k_max + 1)
    w = 2.0 ** (-alpha * k)
    return np.concatenate([[p1], (1 - p1) * w / w.sum()]) if k_max else np.array([1.0])


def _bisect(f, lo: float, hi: float, target: float, increasing: bool) -> float:  # type: ignore[no-untyped-def]
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if (f(mid) < target) == increasing:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def fit_llm_workload(s: TraceSummary, single_gpu_share: float = 0.6) -> LlmWorkloadFit:
    """Fit sizes, run times and their dependence to one trace summary (see module docstring)."""
    if not 0.5 <= single_gpu_share < 1:
        raise SpecError(f"= {single_gpu_share}: must be in [0.5, 1) (median of 1 GPU)", field="single_gpu_share")
    notes: list[str] = []
    max_gpu = s.max_gpus or 1024.0
    k_max = math.floor(math.log2(max_gpu))
    sizes = 2.0 ** np.arange(k_max + 1)
    p1 = single_gpu_share

    def mean(a: float) -> float:
        return float((sizes * _size_probs(p1, a, k_max)).sum())

    lo, hi = -8.0, 20.0
    if not mean(hi) <= s.avg_gpus <= mean(lo):
        notes.append(f"mean GPUs {s.avg_gpus} outside what the size family reaches; clamped")
    alpha = _bisect(mean, lo, hi, s.avg_gpus, increasing=False)
    probs = _size_probs(p1, alpha, k_max)
    med, avg = s.med_run_time_s, s.avg_run_time_s
    mu = math.log(max(med, 1.0))
    sigma = math.sqrt(2 * math.log(avg / med)) if avg > med > 0 else 0.5
    cum = np.concatenate([[0.0], np.cumsum(probs)])
    edges = [(-math.inf if c <= 0 else math.inf if c >= 1 else _N.inv_cdf(float(c))) for c in cum]

    def gpu_s(rho: float) -> float:
        sh = rho * sigma
        tot = 0.0
        for k in range(k_max + 1):
            a = 0.0 if edges[k] == -math.inf else _N.cdf(edges[k] - sh)
            b = 1.0 if edges[k + 1] == math.inf else _N.cdf(edges[k + 1] - sh)
            tot += sizes[k] * (b - a)
        return math.exp(mu + sigma**2 / 2) * tot

    rho = 0.0
    if s.gpu_time_s is not None and s.gpu_jobs > 0:
        target = s.gpu_time_s / s.gpu_jobs
        if target >= gpu_s(0.99):
            notes.append("GPU-time per job beyond the copula's reach; ρ = 0.99")
        rho = _bisect(gpu_s, -0.99, 0.99, target, increasing=True)
    else:
        notes.append("no GPU-time total in the summary; size and run time independent")
    return LlmWorkloadFit(
        s.name, sizes, probs, alpha, mu, sigma, rho, s.max_run_time_s or math.inf, gpu_s(rho), tuple(notes)
    )


def source_occupancy(name: str) -> tuple[float, str]:
    """The named source cluster's mean GPU occupancy (GPU-time / (GPUs × trace span)) and how it is known."""
    s = trace_summary(SYNTHETIC_WORKLOADS[name])
    gpus, span = ACME_CLUSTERS[name]
    if s.gpu_time_s is None:  # pragma: no cover - both Acme rows carry GPU-time
        return 0.6, "no GPU-time in the summary: 0.6 assumed"
    occ = s.gpu_time_s / (gpus * span)
    return occ, (
        f"offered load {occ:.2f} = {name}'s GPU-time {s.gpu_time_s:.3g} GPU-s over {gpus:,} GPUs × "
        f"{span / 86400:.0f} days (AcmeTrace cluster_summary.csv; Hu et al., NSDI '24)"
    )


def synthetic_workload(
    name: str,
    cluster: ClusterSpec | Cluster,
    jobs: int = 2000,
    *,
    seed: int = 0,
    load: float | None = None,
    tenants: int = 8,
    single_gpu_share: float = 0.6,
    warm_start: bool = True,
) -> Workload:
    """``jobs`` arriving jobs of the named synthetic workload scaled to ``cluster``, plus (``warm_start``)
    the jobs already running at t = 0; ``load`` None = the source cluster's occupancy (module docstring)."""
    if name not in SYNTHETIC_WORKLOADS:
        raise SpecError(
            f"= {name!r}: unknown synthetic workload; choose one of {', '.join(SYNTHETIC_WORKLOADS)}",
            field="synthetic",
        )
    if not 1 <= jobs <= MAX_SYNTHETIC_JOBS:
        raise SpecError(f"= {jobs}: must be between 1 and {MAX_SYNTHETIC_JOBS:,}", field="jobs")
    load_note = ""
    if load is None:
        load, load_note = source_occupancy(name)
    if not 0 < load <= 10:
        raise SpecError(f"= {load}: offered load must be in (0, 10]", field="load")
    if tenants < 1:
        raise SpecError(f"= {tenants}: must be ≥ 1", field="tenants")
    c = cluster if isinstance(cluster, Cluster) else Cluster.from_spec(cluster)
    domain = c.nodes_per_domain * c.gpus_per_node
    fit = fit_llm_workload(trace_summary(SYNTHETIC_WORKLOADS[name]), single_gpu_share)
    rng = np.random.default_rng(seed)
    cap = 2 ** math.floor(math.log2(c.total_gpus))
    G = c.gpus_per_node

    def draw(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        z1 = rng.standard_normal(n)
        z2 = fit.rho * z1 + math.sqrt(1 - fit.rho**2) * rng.standard_normal(n)
        k = np.minimum(np.searchsorted(np.cumsum(fit.probs), _ncdf(z1), side="right"), fit.sizes.size - 1)
        g = np.minimum(fit.sizes[k], cap).astype(np.int64)
        r = np.clip(np.exp(fit.run_mu + fit.run_sigma * z2), 1.0, fit.max_run_s)
        return g, r, np.where(g >= G, -(-g // G) * G, g)

    gpus, run, _ = draw(jobs)
    pool_g, pool_r, pool_a = draw(max(20_000, jobs))  # the rate comes from a large sample: stable per seed
    rate = load * c.total_gpus / float((pool_a * pool_r).mean())  # jobs per second for the offered load
    submit = np.cumsum(rng.exponential(1.0 / rate, jobs))
    submit -= submit[0]
    w = 1.0 / np.arange(1, tenants + 1)
    tenant = rng.choice(tenants, size=jobs, p=w / w.sum())

    def job(t: float, d: float, g: int, who: int, tag: str = "") -> Job:
        return Job(
            submit_s=t,
            duration_s=d,
            gpus=g,
            tenant=f"t{who}",
            priority=1 if g >= 8 * G else 0,
            tp=int(min(g, 8, domain)),
            name=tag,
        )

    warm: list[Job] = []
    if warm_start:
        # M/G/inf in steady state: in the system with probability ∝ run time, residual = run × U(0, 1)
        order = rng.choice(pool_r.size, size=pool_r.size, p=pool_r / pool_r.sum())
        target, used = min(load, 1.0) * c.total_gpus, 0
        for i in order:
            if used + pool_a[i] > target:
                continue
            used += int(pool_a[i])
            warm.append(
                job(
                    0.0,
                    float(max(1.0, pool_r[i] * rng.uniform())),
                    int(pool_g[i]),
                    int(rng.choice(tenants, p=w / w.sum())),
                    "warm-start",
                )
            )
            if target - used < 1:
                break
    out = tuple(warm) + tuple(job(float(submit[i]), float(run[i]), int(gpus[i]), int(tenant[i])) for i in range(jobs))
    notes = (
        f"synthetic {name}: sizes α={fit.alpha:.3f}, run time log-normal σ={fit.run_sigma:.2f}, "
        f"ρ={fit.rho:.2f}, offered load {load:.2f}",
        *((load_note,) if load_note else ()),
        *(
            (f"warm start: {len(warm):,} jobs already running at t = 0 on {used:,} GPUs (steady state)",)
            if warm_start
            else ()
        ),
        *fit.notes,
    )
    return Workload(name, out, fit.source, 0, notes)


def _ncdf(z: np.ndarray) -> np.ndarray:
    """Standard normal CDF, elementwise."""
    v = np.frompyfunc(lambda x: 0.5 * (1.0 + math.erf(x / math.sqrt(2.0))), 1, 1)
    return np.asarray(v(z), dtype=float)
