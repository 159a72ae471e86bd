"""benchmarks.mlperf_training reads an MLPerf Training result log's steady state in each of the three ways the
logs time training apart from evaluation (synthetic MLLOG lines; the real logs are not shipped)."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.mlperf_training import R, measure, parse_mllog


def _line(key: str, t: int, value: object = None, **meta: object) -> str:
    rec = {"namespace": "", "time_ms": t, "event_type": "POINT_IN_TIME", "key": key, "value": value, "metadata": meta}
    return "0: :::MLLOG " + json.dumps(rec)


def _head(gbs: int = 64, seq: int = 2048, ga: int = 4) -> list[str]:
    return [
        _line("global_batch_size", 0, gbs),
        _line("max_sequence_length", 0, seq),
        _line("gradient_accumulation_steps", 0, ga),
        "some non-MLLOG output line",
        ":::MLLOG {not json",
    ]


def test_blocks_time_the_training_between_evaluations_and_drop_the_first() -> None:
    tok = 64 * 2048 * 10
    lines = _head()
    t = 1000
    for i, secs in enumerate((30.0, 10.0, 10.5)):  # the first block carries the warm-up
        lines.append(_line("block_start", t, first_epoch_num=i * tok, epoch_count=tok))
        t += int(secs * 1000)
        lines.append(_line("block_stop", t, first_epoch_num=i * tok, epoch_count=tok))
        lines.append(_line("eval_start", t))
        t += 5000  # evaluation: outside every span
        lines.append(_line("eval_stop", t))
    log = parse_mllog("\n".join(lines))
    assert log.mode == "blocks"
    assert log.spans == [(float(tok), 10.0), (float(tok), 10.5)]


def test_blocks_counted_in_samples_are_turned_into_tokens() -> None:
    lines = _head(seq=8192)
    lines += [_line("block_start", 0, samples_count=0), _line("block_stop", 1000, samples_count=10)]
    lines += [_line("block_start", 2000, samples_count=10), _line("block_stop", 4000, samples_count=30)]
    log = parse_mllog("\n".join(lines))
    assert log.spans == [(20 * 8192.0, 2.0)]


def test_one_block_runs_are_timed_between_evaluations() -> None:
    # v3.0 logs: block_start once, then eval_start / eval_stop pairs every epoch_num step
    lines = [*_head(), _line("block_start", 0, first_epoch_num=0, epoch_count=100)]
    t = 0
    for k in range(1, 5):
        t += 20_000
        lines.append(_line("eval_start", t, epoch_num=k * 100))
        t += 3000
        lines.append(_line("eval_stop", t, epoch_num=k * 100))
    log = parse_mllog("\n".join(lines))
    assert log.mode == "evals"
    # three spans between evaluations (the one before the first is the warm-up, left out); 20 s each
    assert log.spans == [(100.0, 20.0)] * 3


def test_step_times_win_and_drop_the_first_five() -> None:
    lines = _head(gbs=16, seq=8192)
    times = [9.0, 8.0, 7.0, 6.0, 5.5, 5.0, 5.2, 4.8]
    lines += [_line("tracked_stats", i, {"train_step_time": s}, step=i) for i, s in enumerate(times)]
    lines += [_line("block_start", 0, epoch_count=1), _line("block_stop", 1, epoch_count=1)]
    log = parse_mllog("\n".join(lines))
    assert log.mode == "steps"
    assert [s for _, s in log.spans] == [5.0, 5.2, 4.8]
    m = measure(["\n".join(lines)])
    assert m.tokens_per_s == pytest.approx(16 * 8192 / 5.0)
    assert (m.gbs, m.seq, m.ga, m.steps) == (16, 8192, 4, 3)


def test_a_log_without_a_steady_span_is_an_error() -> None:
    with pytest.raises(ValueError, match="no steady-state span"):
        measure(["\n".join(_head())])
    with pytest.raises(ValueError, match=r"no result_N\.txt"):
        measure([])


def test_every_row_is_a_layout_that_covers_its_gpus() -> None:
    for cid, _v, _d, _cfg, _gpu, nodes, gpn, dom, _nic, tp, pp, cp, vpp, mbs, _rel, _model, _fab in R:
        n = nodes * gpn
        assert n % (tp * pp * cp) == 0, cid
        assert dom in (8, 72) and mbs >= 1 and vpp >= 1, cid
