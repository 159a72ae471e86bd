"""Executors: run chunks of sweep points on a local process pool or on a Ray cluster, one interface.

``LocalExecutor`` (default) is a :class:`concurrent.futures.ProcessPoolExecutor` whose workers fork
from a ``forkserver`` that has already imported wanka (cheap start, no fork of a threaded parent).
``RayExecutor`` sends the same function to a Ray cluster: an existing one (``address``, e.g.
``127.0.0.1:6379``; its workers must have the same wanka installed) or one started in this process
(``local=True``). Both keep a bounded number of chunks in flight and yield each chunk's results as
soon as it finishes, in completion order.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from wanka.errors import SpecError, WankaError

__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "RayExecutor", "make_executor"]

EXECUTORS = ("local", "ray")
MAX_WORKERS = 1024
IN_FLIGHT_PER_WORKER = 4
RAY_CONNECT_TIMEOUT_S = 10.0

S = TypeVar("S")
C = TypeVar("C")
R = TypeVar("R")


class Executor(ABC):
    """Runs ``fn(shared, chunk)`` for every chunk; yields each result as it completes."""

    name: str = "executor"
    workers: int = 1

    @abstractmethod
    def map_chunks(self, fn: Callable[[S, C], R], shared: S, chunks: Sequence[C]) -> Iterator[R]: ...

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release workers (idempotent)."""

    def describe(self) -> str:
        return f"{self.name} ({self.workers} worker{'s' if self.workers != 1 else ''})"

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_workers(workers: int | None) -> int:
    n = workers if workers is not None else (os.cpu_count() or 1)
    if not (1 <= n <= MAX_WORKERS):
        raise SpecError(f"= {n}: must be between 1 and {MAX_WORKERS}", field="--workers")
    return n


class LocalExecutor(Executor):
    """A local process pool (``workers`` processes, default: the CPU count)."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = _check_workers(workers)
        self._pool: ProcessPoolExecutor | None = None

    def _ensure(self) -> ProcessPoolExecutor:
        if self._pool is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["wanka.planner.sweep"])
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)
        return self._pool

    def warm_up(self) -> None:
        """Start every worker now (benchmarks time the work, not the start)."""
        pool = self._ensure()
        for f in [pool.submit(_noop) for _ in range(self.workers * 2)]:
            f.result()

    def map_chunks(self, fn: Callable[[S, C], R], shared: S, chunks: Sequence[C]) -> Iterator[R]:
        pool = self._ensure()
        todo = iter(chunks)
        window = self.workers * IN_FLIGHT_PER_WORKER
        pending: set[Future[R]] = set()
        try:
            while True:
                while len(pending) < window:
                    nxt = next(todo, None)
                    if nxt is None:
                        break
                    pending.add(pool.submit(fn, shared, nxt))
                if not pending:
                    return
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    yield f.result()
        except BrokenProcessPool:
            raise WankaError(
                "a sweep worker process died (out of memory or killed); run the sweep again to resume"
            ) from None
        finally:
            for f in pending:
                f.cancel()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _noop() -> int:
    return os.getpid()


def _reachable(address: str) -> None:
    target = address.split("://", 1)[-1]
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise SpecError(
            f"= {address!r}: expected HOST:PORT of the Ray head (e.g. 127.0.0.1:6379)", field="--ray-address"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=RAY_CONNECT_TIMEOUT_S):
            pass
    except OSError as e:
        raise WankaError(f"cannot reach a Ray head at {address}: {e.strerror or e}") from None


class RayExecutor(Executor):
    """Chunks as Ray tasks on an existing cluster (``address``) or an in-process one (``local=True``)."""

    name = "ray"

    def __init__(self, *, address: str | None = None, local: bool = False, workers: int | None = None) -> None:
        if (address is None) == (not local):
            raise SpecError("give either --ray-address ADDRESS or --ray-local", field="--executor ray")
        try:
            import ray
        except ImportError:
            raise WankaError("the ray executor needs Ray: `pip install 'wanka[ray]'` (ray>=2.9)") from None
        self._ray: Any = ray
        self.address = address
        self.workers = _check_workers(workers) if local else 0
        if address is not None and address != "auto":
            _reachable(address)
        opts: dict[str, Any] = {"log_to_driver": False, "logging_level": "warning", "ignore_reinit_error": True}
        try:
            if address is not None:
                ray.init(address=address, **opts)
            else:
                ray.init(num_cpus=self.workers, include_dashboard=False, **opts)
        except Exception as e:  # ray raises ConnectionError, RuntimeError, ValueError …
            raise WankaError(f"cannot start Ray ({'address ' + address if address else 'local'}): {e}") from None
        self._up = True
        if address is not None:
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def describe(self) -> str:
        where = self.address or "in-process cluster"
        return f"ray at {where} ({self.workers} CPU{'s' if self.workers != 1 else ''})"

    def map_chunks(self, fn: Callable[[S, C], R], shared: S, chunks: Sequence[C]) -> Iterator[R]:
        ray = self._ray
        remote = ray.remote(num_cpus=1, max_retries=2)(fn)
        ref = ray.put(shared)
        todo = iter(chunks)
        window = max(1, self.workers) * IN_FLIGHT_PER_WORKER
        pending: list[Any] = []
        try:
            while True:
                while len(pending) < window:
                    nxt = next(todo, None)
                    if nxt is None:
                        break
                    pending.append(remote.remote(ref, nxt))
                if not pending:
                    return
                done, pending = ray.wait(pending, num_returns=1)
                for d in done:
                    yield ray.get(d)
        except ray.exceptions.RayError as e:
            raise WankaError(f"a Ray task failed: {e}") from None
        finally:
            for p in pending:
                ray.cancel(p)

    def close(self) -> None:
        if getattr(self, "_up", False):
            self._ray.shutdown()
            self._up = False


def make_executor(
    kind: str = "local",
    *,
    workers: int | None = None,
    ray_address: str | None = None,
    ray_local: bool = False,
) -> Executor:
    """The executor for ``--executor`` (``local`` or ``ray``); Ray flags imply ``ray``."""
    if kind not in EXECUTORS:
        raise SpecError(f"= {kind!r}: must be one of {', '.join(EXECUTORS)}", field="--executor")
    if kind == "local" and (ray_address or ray_local):
        kind = "ray"
    if kind == "ray":
        if ray_address and ray_local:
            raise SpecError("give --ray-address or --ray-local, not both", field="--ray-address")
        if not ray_address and not ray_local:
            ray_address = os.environ.get("RAY_ADDRESS") or None
            if ray_address is None:
                raise SpecError("--executor ray needs --ray-address ADDRESS or --ray-local", field="--executor")
        return RayExecutor(address=ray_address, local=ray_local, workers=workers)
    return LocalExecutor(workers)
