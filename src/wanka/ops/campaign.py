"""Vectorised Monte Carlo of a whole training campaign: failures, recovery, checkpoints, stragglers.

Each replica is one possible campaign. Arrays hold every replica's state; one loop turn handles the
next event of every replica still running (never a Python loop over replicas):

1. from the start of its current recovery, draw the time ``x`` to the next interruption (unexpected:
   exponential with the job rate, or Weibull renewal with the same mean; planned: Poisson at
   ``planned_interruptions_per_day``) and its cause (rates are proportional to probabilities);
2. if ``x`` falls inside the recovery, the recovery is interrupted; otherwise the job runs for
   ``x − recovery`` and progresses at ``1 − overhead`` (checkpoint stalls ``δ/(τ+δ)``);
3. the work since the last *persisted* checkpoint is lost — ``w mod τ``, or one interval more when
   the newest async checkpoint was still draining (``persist_lag``); planned stops lose nothing;
4. the next recovery is detection (per cause) + restart + a wait for a spare (Erlang B) + load.

The campaign ends at ``campaign_days`` (a fixed window) or when ``training.tokens`` are trained.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from wanka.errors import InfeasibleError, SpecError
from wanka.ops.checkpoint import CheckpointCost, checkpoint_cost, optimal_checkpoint_interval
from wanka.ops.rates import JobFailureRates, job_failure_rates
from wanka.ops.recovery import RecoveryModel, recovery_model
from wanka.ops.result import CampaignResult, CauseResult, Stat
from wanka.ops.stragglers import straggler_effect_for
from wanka.spec import Scenario
from wanka.storage import data_read_demand

__all__ = [
    "CampaignInputs",
    "campaign_inputs",
    "campaign_throughput",
    "ettr_limits",
    "expected_ettr",
    "operating_assumptions",
    "run_campaign",
    "simulate_campaign",
]

_DAY = 86_400.0
_MAX_REPLICAS = 1_000_000
_MAX_EVENT_BUDGET = 4e8  # replicas × expected events: bounds memory and run time
_MAX_CAMPAIGN_S = 20 * 365 * _DAY


@dataclass(frozen=True)
class CampaignInputs:
    """Every number the simulation uses (SI), resolved from a scenario; ``replace`` it for sweeps."""

    scenario: str
    rates: JobFailureRates
    recovery: RecoveryModel
    checkpoint: CheckpointCost
    planned_rate: float  # 1/s
    distribution: str
    weibull_shape: float
    interval_s: float  # primary tier (storage for sync/async, peer memory for in_memory)
    optimal_interval_s: float
    persistent_interval_s: float  # in_memory only: its checkpoints to storage (inf otherwise)
    step_time_s: float
    tokens_per_step: float | None
    straggler_factor: float
    horizon_s: float | None  # fixed window, or None
    work_s: float | None  # productive time to train the tokens (None in window mode)
    interval_floor_s: float = 0.0  # the shortest allowed interval: whole steps ≥ max(step, persist)
    notes: tuple[str, ...] = ()

    @property
    def in_memory(self) -> bool:
        return self.checkpoint.mode == "in_memory"

    @property
    def overhead(self) -> float:
        """Share of running time stalled by checkpoints, δ/(τ+δ) per tier."""
        c = self.checkpoint
        o = _stall(c.blocking_s, self.interval_s)
        if self.in_memory:
            o += _stall(c.storage_blocking_s, self.persistent_interval_s)
        return min(o, 1.0)


def _stall(blocking: float, interval: float) -> float:
    return 0.0 if math.isinf(interval) else blocking / (interval + blocking)


def campaign_inputs(
    scenario: Scenario,
    *,
    step_time_s: float,
    tokens_per_step: float | None = None,
    gpus: int | None = None,
    interval_s: float | None = None,
) -> CampaignInputs:
    """Resolve ``scenario`` into simulation inputs; ``gpus`` resizes the job (same checkpoint costs)."""
    if not (math.isfinite(step_time_s) and step_time_s > 0):
        raise SpecError(f"= {step_time_s!r}: must be a positive number of seconds", field="step_time_s")
    f = scenario.failures
    rates = job_failure_rates(scenario, gpus=gpus)
    rec = recovery_model(scenario, rates)
    if tokens_per_step is None and scenario.training is not None:
        tokens_per_step = float(scenario.training.global_batch_seqs * scenario.seq_len)
    read_bps = 0.0
    if tokens_per_step is not None:
        read_bps = data_read_demand(scenario, tokens_per_step / step_time_s).demand
    ck = checkpoint_cost(scenario, data_read_bytes_per_s=read_bps)
    notes: list[str] = []
    mtbf = rates.mtbf_s
    # a save must drain before the next starts, and saves happen at step boundaries
    floor = _whole_steps(max(step_time_s, ck.persist_lag_s), step_time_s)
    optimum = math.inf
    if math.isfinite(mtbf):
        optimum = max(floor, optimal_checkpoint_interval(ck.blocking_s, mtbf))
    chosen = interval_s if interval_s is not None else scenario.checkpoint.interval_s
    if chosen is not None:
        if chosen < step_time_s * (1 - 1e-9):
            raise SpecError(
                f"= {chosen:g} s: shorter than one training step ({step_time_s:.3g} s); a checkpoint is taken "
                "between steps, so the interval must be at least one step",
                field="checkpoint.interval_s",
            )
        tau = _whole_steps(max(chosen, floor), step_time_s)
        if chosen < ck.persist_lag_s:
            notes.append(
                f"checkpoint.interval_s {chosen:g} s is shorter than the {ck.persist_lag_s:.3g} s a save takes "
                f"to persist; a save waits for the previous one, so checkpoints come every {tau:.3g} s"
            )
    else:
        tau = optimum
    base = CampaignInputs(
        scenario=scenario.name,
        rates=rates,
        recovery=rec,
        checkpoint=ck,
        planned_rate=f.planned_interruptions_per_day / _DAY,
        distribution=f.distribution,
        weibull_shape=f.weibull_shape,
        interval_s=tau,
        optimal_interval_s=optimum,
        persistent_interval_s=math.inf,
        step_time_s=step_time_s,
        tokens_per_step=tokens_per_step,
        straggler_factor=1.0,
        horizon_s=None,
        work_s=None,
        interval_floor_s=floor,
    )
    if chosen is None and math.isfinite(optimum):
        # Young/Daly gives the optimum of a continuous interval; search the whole-step intervals around it
        tau = optimum = _best_interval(base, optimum, floor, step_time_s)
    tau_p = math.inf
    if ck.mode == "in_memory":
        fb = float((rates.rates * rec.peer_loss_p).sum())
        tau_p = optimal_checkpoint_interval(ck.storage_blocking_s, 1.0 / fb) if fb > 0 else math.inf
        tau_p = max(tau_p, ck.storage_persist_lag_s, tau if math.isfinite(tau) else 0.0)
        if math.isfinite(tau_p):
            tau_p = _whole_steps(tau_p, step_time_s)
    strag = straggler_effect_for(scenario, nodes=rates.footprint.nodes, spares=rec.spares).factor
    horizon = scenario.campaign_days * _DAY if scenario.campaign_days is not None else None
    work = None
    if horizon is None:
        if scenario.training is None or tokens_per_step is None:
            raise SpecError(
                "set campaign_days (a fixed window) or a training block with tokens to train", field="campaign_days"
            )
        work = scenario.training.tokens / tokens_per_step * step_time_s * strag
    return replace(
        base,
        interval_s=tau,
        optimal_interval_s=optimum,
        persistent_interval_s=tau_p,
        straggler_factor=strag,
        horizon_s=horizon,
        work_s=work,
        notes=tuple(notes),
    )


def _whole_steps(t: float, step: float) -> float:
    """``t`` rounded up to a whole number of steps (at least one)."""
    return max(1, math.ceil(t / step - 1e-9)) * step


def _best_interval(base: CampaignInputs, daly: float, floor: float, step: float) -> float:
    """The whole-step interval ≥ ``floor`` with the highest closed-form ETTR near Daly's optimum."""
    k_floor = max(1, round(floor / step))
    k = daly / step
    cands = {k_floor, max(k_floor, math.floor(k)), max(k_floor, math.ceil(k))}
    return max((c * step for c in cands), key=lambda t: expected_ettr(replace(base, interval_s=t)))


def ettr_limits(inp: CampaignInputs) -> dict[str, float]:
    """What keeps ETTR below 1, as shares of wall-clock time (closed form; they sum to ``1 − ETTR``).

    Keys: ``checkpoint stalls``, ``lost work`` (rolled back to the last checkpoint), ``detection``,
    ``restart``, ``waiting for spare nodes`` (or running shrunk, when elastic), ``checkpoint load``,
    ``planned maintenance``.
    """
    r, rec, ck = inp.rates, inp.recovery, inp.checkpoint
    lost, load = _lost_and_load(inp)
    lam = r.rates
    wait = rec.expected_wait_s(r.replace_node)
    planned = inp.planned_rate * (ck.flush_s + rec.restart_s + ck.storage_load_s)
    den = 1.0 + float((lam * (rec.detection_s + rec.restart_s + wait + load)).sum()) + planned
    parts = {
        "checkpoint stalls": inp.overhead,
        "lost work": float((lam * lost).sum()),
        "detection": float((lam * rec.detection_s).sum()),
        "restart": float(lam.sum() * rec.restart_s),
        "running shrunk" if rec.elastic else "waiting for spare nodes": float((lam * wait).sum()),
        "checkpoint load": float((lam * load).sum()),
        "planned maintenance": planned,
    }
    return {k: v / den for k, v in parts.items()}


def _mean_lost(interval: float, lag: float) -> float:
    return 0.0 if math.isinf(interval) else interval / 2 + lag


def _lost_and_load(inp: CampaignInputs) -> tuple[np.ndarray, np.ndarray]:
    """Expected work lost and checkpoint load time per interruption, per failure class: from the
    persistent checkpoint, or with in-memory checkpoints from a peer's copy unless the peer is lost too."""
    r, rec, ck = inp.rates, inp.recovery, inp.checkpoint
    lost = np.full(r.rates.shape, _mean_lost(inp.interval_s, ck.persist_lag_s))
    load = np.full(r.rates.shape, ck.load_s)
    if inp.in_memory:
        p = rec.peer_loss_p
        lost = (1 - p) * lost + p * _mean_lost(inp.persistent_interval_s, ck.storage_persist_lag_s)
        load = (1 - p) * load + p * ck.storage_load_s
    return lost, load


def expected_ettr(inp: CampaignInputs) -> float:
    """First-order closed form of ETTR (for bounds and a cross-check of the Monte Carlo).

    Per second of running: progress ``1 − overhead − Σλ·lost`` over wall ``1 + Σλ·downtime``.
    """
    r, rec, ck = inp.rates, inp.recovery, inp.checkpoint
    lost, load = _lost_and_load(inp)
    down = rec.detection_s + rec.restart_s + rec.expected_wait_s(r.replace_node) + load
    planned_down = ck.flush_s + rec.restart_s + ck.storage_load_s
    num = 1.0 - inp.overhead - float((r.rates * lost).sum())
    den = 1.0 + float((r.rates * down).sum()) + inp.planned_rate * planned_down
    return max(0.0, num / den)


def _lost_work(w: np.ndarray, tau: float, lag: float) -> np.ndarray:
    """Progress since the last persisted checkpoint after ``w`` seconds of work in a run segment."""
    if math.isinf(tau):
        return w
    k = np.floor(w / tau)
    phase = w - k * tau
    return np.where((k >= 1) & (phase < lag), phase + tau, phase)


def run_campaign(inp: CampaignInputs, *, replicas: int = 1000, seed: int = 0) -> CampaignResult:
    """Simulate ``replicas`` campaigns of ``inp`` (reproducible for a given ``seed``)."""
    if not (1 <= replicas <= _MAX_REPLICAS):
        raise SpecError(f"= {replicas}: must be between 1 and {_MAX_REPLICAS:,}", field="replicas")
    r, rec, ck = inp.rates, inp.recovery, inp.checkpoint
    n_c = len(r.names)
    lam_f, lam_p = r.total, inp.planned_rate
    lam = lam_f + lam_p
    est = expected_ettr(inp)
    if est <= 1e-4 and lam > 0:
        raise InfeasibleError(
            f"failures arrive every {1 / lam:,.0f} s on average, faster than the job recovers and "
            f"checkpoints; lower failures.rate_scale or the recovery times"
        )
    o = inp.overhead
    span = inp.horizon_s if inp.horizon_s is not None else float(inp.work_s or 0.0) / max(est, 1e-9)
    if span > _MAX_CAMPAIGN_S:
        raise InfeasibleError(
            f"the campaign would take about {span / _DAY / 365:,.0f} years; lower training.tokens or set campaign_days"
        )
    mult = 1.0 if inp.horizon_s is not None else 3.0
    exp_events = lam * span * mult
    if replicas * exp_events > _MAX_EVENT_BUDGET:
        raise SpecError(
            f"= {replicas}: {replicas:,} replicas × ~{exp_events:,.0f} events is too much work; use fewer replicas",
            field="replicas",
        )
    cap = int(exp_events + 12 * math.sqrt(exp_events) + 100)

    rng = np.random.default_rng(seed)
    cdf = np.cumsum(np.append(r.rates, lam_p)) / lam if lam > 0 else np.ones(n_c + 1)
    cdf_f = np.cumsum(r.rates) / lam_f if lam_f > 0 else np.ones(n_c)
    wb_scale = 1.0 / (lam_f * math.gamma(1 + 1 / inp.weibull_shape)) if lam_f > 0 else math.inf
    weibull = inp.distribution == "weibull" and inp.weibull_shape != 1.0
    det = np.append(rec.detection_s, 0.0)
    repl = np.append(r.replace_node, False)
    peer = np.append(rec.peer_loss_p, 0.0)
    tau, lag = inp.interval_s, ck.persist_lag_s
    work = inp.work_s if inp.work_s is not None else math.inf

    s = np.zeros(replicas)  # start of the current recovery
    d = np.zeros(replicas)  # its length (0: the job is running)
    rc = np.full(replicas, n_c + 1)  # cause of the current recovery (n_c + 1: none)
    prog = np.zeros(replicas)  # productive time kept
    wall = np.full(replicas, np.nan)
    counts = np.zeros((replicas, n_c + 1), dtype=np.int32)
    lost_by = np.zeros(n_c + 2)
    ckpt_s = 0.0
    active = np.arange(replicas)
    for _ in range(cap):
        if active.size == 0:
            break
        n = active.size
        u = rng.random((3, n))
        if weibull:  # renewal at each restart: Weibull failures (mean 1/λ) against Poisson planned stops
            x_f = wb_scale * rng.weibull(inp.weibull_shape, n)
            x_p = rng.exponential(1 / lam_p, n) if lam_p > 0 else np.full(n, np.inf)
            x = np.minimum(x_f, x_p)
            pick = np.minimum(np.searchsorted(cdf_f, u[0], side="right"), n_c - 1)
            cause_all = np.where(x_p < x_f, n_c, pick)
        else:
            x = rng.exponential(1 / lam, n) if lam > 0 else np.full(n, np.inf)
            cause_all = np.minimum(np.searchsorted(cdf, u[0], side="right"), n_c)
        si, di = s[active], d[active]
        rec_spent = np.minimum(x, di)
        run = np.maximum(x - di, 0.0)
        if inp.horizon_s is not None:
            h = inp.horizon_s
            end = si + x >= h
            rec_spent = np.where(end, np.clip(h - si, 0.0, di), rec_spent)
            run = np.where(end, np.maximum(h - si - di, 0.0), run)
            w = run * (1 - o)
            wall[active[end]] = h
        else:
            w = run * (1 - o)
            need = work - prog[active]
            end = w >= need
            w = np.where(end, need, w)
            run = np.where(end, need / (1 - o), run)
            wall[active[end]] = (si + di + run)[end]
        lost_by += np.bincount(rc[active], weights=rec_spent, minlength=n_c + 2)
        ckpt_s += float((run * o).sum())
        prog[active[end]] += w[end]
        ev = ~end
        idx, w, u, cause = active[ev], w[ev], u[:, ev], cause_all[ev]
        is_pl = cause == n_c
        lost = _lost_work(w, tau, lag)
        if inp.in_memory:  # Gemini: restart from the peer copy unless the peer was lost too
            fallback = u[2] < peer[cause]
            lost_p = _lost_work(w, inp.persistent_interval_s, ck.storage_persist_lag_s)
            lost = np.where(fallback, lost_p, lost)
            load = np.where(fallback | is_pl, ck.storage_load_s, ck.load_s)
        else:
            load = np.full(idx.size, ck.storage_load_s)
        lost = np.where(is_pl, 0.0, lost)
        wait = np.where(repl[cause] & (u[1] < rec.p_no_spare), rec.spare_wait_s, 0.0)
        dt = det[cause]
        t_ev = (si + x)[ev]
        if inp.horizon_s is not None:
            dt = np.minimum(dt, inp.horizon_s - t_ev)
        prog[idx] += w - lost
        s[idx] = t_ev + dt
        d[idx] = rec.restart_s + wait + load + np.where(is_pl, ck.flush_s, 0.0)
        rc[idx] = cause
        counts[idx, cause] += 1
        lost_by += np.bincount(cause, weights=lost + dt, minlength=n_c + 2)
        active = idx
    done = ~np.isnan(wall)
    if not done.all():  # pragma: no cover - the cap is 12 sigma above the expected event count
        raise InfeasibleError("the simulation did not finish within its event budget; lower failures.rate_scale")
    return _result(inp, replicas, seed, counts, prog, wall, lost_by, ckpt_s, est)


def _result(
    inp: CampaignInputs,
    replicas: int,
    seed: int,
    counts: np.ndarray,
    prog: np.ndarray,
    wall: np.ndarray,
    lost_by: np.ndarray,
    ckpt_s: float,
    est: float,
) -> CampaignResult:
    r, ck = inp.rates, inp.checkpoint
    n_c = len(r.names)
    gpus = r.footprint.gpus
    ettr = prog / wall
    total = counts.sum(axis=1)
    unexpected = counts[:, :n_c].sum(axis=1)
    gh = gpus / 3600.0 / replicas
    names = (*r.names, "planned")
    labels = (*r.labels, "Planned maintenance")
    cats = (*r.categories, "Planned")
    det = (*r.detection_s.tolist(), 0.0)
    mean_total = max(float(total.mean()), 1e-300)
    causes = tuple(
        CauseResult(
            names[i],
            labels[i],
            cats[i],
            i == n_c,
            Stat.of(counts[:, i]),
            float(det[i]),
            float(lost_by[i] * gh),
            float(counts[:, i].mean() / mean_total),
        )
        for i in range(n_c + 1)
    )
    lost = {c.name: c.gpu_hours_lost for c in causes}
    lost["checkpointing"] = ckpt_s * gh
    lost["stragglers"] = float(prog.sum() * (1 - 1 / inp.straggler_factor)) * gh
    tps = tok = None
    if inp.tokens_per_step is not None:
        tokens = prog / inp.straggler_factor / inp.step_time_s * inp.tokens_per_step
        tok, tps = Stat.of(tokens), Stat.of(tokens / wall / gpus)
    notes = [*inp.recovery.notes, *r.notes, *inp.notes, *ck.assumptions]
    return CampaignResult(
        scenario=inp.scenario,
        replicas=replicas,
        seed=seed,
        gpus=gpus,
        nodes=r.footprint.nodes,
        mode="window" if inp.horizon_s is not None else "tokens",
        step_time_s=inp.step_time_s,
        tokens_per_step=inp.tokens_per_step,
        interruptions=Stat.of(total),
        unexpected_interruptions=Stat.of(unexpected),
        planned_interruptions=Stat.of(counts[:, n_c]),
        ettr=Stat.of(ettr),
        goodput=Stat.of(ettr / inp.straggler_factor),
        wall_clock_s=Stat.of(wall),
        tokens_per_s_per_gpu=tps,
        tokens_trained=tok,
        job_mtbf_s=r.mtbf_s,
        failures_per_day=r.total * _DAY,
        ettr_analytic=est,
        checkpoint_mode=ck.mode,
        checkpoint_interval_s=inp.interval_s,
        optimal_checkpoint_interval_s=inp.optimal_interval_s,
        checkpoint_blocking_s=ck.blocking_s,
        checkpoint_load_s=ck.load_s,
        checkpoint_size_bytes=ck.size_bytes,
        checkpoint_io_source=ck.source,
        straggler_factor=inp.straggler_factor,
        spares=inp.recovery.spares,
        p_no_spare=inp.recovery.p_no_spare,
        gpu_hours_lost=lost,
        by_cause=causes,
        rates_table=r.table,
        rates_source=r.source,
        assumptions=tuple(dict.fromkeys(notes)),
        ettr_limits=ettr_limits(inp),
        hot_spares=inp.recovery.hot_spares,
        spares_from=inp.recovery.spares_from,
        elastic=inp.recovery.elastic,
        checkpoint_persist_s=ck.persist_lag_s,
        checkpoint_coordination_s=ck.coordination_s,
        checkpoint_interval_floor_s=inp.interval_floor_s,
        job_floor_failures_per_day=r.floor_rate * _DAY,
    )


def simulate_campaign(
    scenario: Scenario,
    *,
    step_time_s: float,
    tokens_per_step: float | None = None,
    seed: int = 0,
    replicas: int = 1000,
    interval_s: float | None = None,
) -> CampaignResult:
    """Monte Carlo of ``scenario``'s training campaign with the given steady-state step time.

    >>> from wanka.spec import parse_scenario
    >>> s = parse_scenario({"cluster": {"accelerator": "H100", "nodes": 64}, "campaign_days": 7,
    ...     "model": {"n_layers": 32, "hidden": 4096, "n_heads": 32, "n_kv_heads": 8, "ffn_hidden": 14336,
    ...               "vocab": 128256, "seq_len": 8192}, "failures": {"hot_spares": 4}})
    >>> r = simulate_campaign(s, step_time_s=5.0, replicas=200, seed=1)
    >>> 0.9 < r.ettr.mean <= 1.0
    True
    """
    inp = campaign_inputs(scenario, step_time_s=step_time_s, tokens_per_step=tokens_per_step, interval_s=interval_s)
    return run_campaign(inp, replicas=replicas, seed=seed)


def campaign_throughput(
    scenario: Scenario, step_time_s: float, tokens_per_step: float, seed: int = 0, *, replicas: int = 200
) -> float:
    """Mean tokens/s/GPU over the whole campaign, failures, restarts and checkpoints included."""
    res = simulate_campaign(
        scenario, step_time_s=step_time_s, tokens_per_step=tokens_per_step, seed=seed, replicas=replicas
    )
    assert res.tokens_per_s_per_gpu is not None
    return res.tokens_per_s_per_gpu.mean


def operating_assumptions(scenario: Scenario, *, step_time_s: float | None = None) -> tuple[str, ...]:
    """The operations defaults in use for ``scenario`` (spares, recovery times, failure rates,
    checkpoint coordination) as printable assumptions, without running a campaign."""
    rates = job_failure_rates(scenario)
    rec = recovery_model(scenario, rates)
    notes = [*rec.notes, *rates.notes]
    if scenario.model is not None:
        with_step = step_time_s is not None and step_time_s > 0
        ck = checkpoint_cost(scenario)
        notes += [a for a in ck.assumptions if a.startswith("checkpoint coordination")]
        if with_step and scenario.checkpoint.interval_s is None:
            notes.append("checkpoint interval: Young/Daly optimum over whole steps ≥ the persist time")
    return tuple(dict.fromkeys(notes))
