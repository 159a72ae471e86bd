"""How the server runs work: a worker pool with a time limit, caches, error mapping, the body limit."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import anyio
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wanka.errors import InfeasibleError, SpecError, WankaError
from wanka.spec import Scenario
from wanka.web.inputs import MAX_BODY_BYTES, check_depth

__all__ = [
    "BodyLimit",
    "install_error_handlers",
    "offload",
    "plan_cached",
    "read_json_body",
    "save_plan_run",
    "spec_error_detail",
    "store_call",
]

T = TypeVar("T")
LIMIT_S = 30.0  # a plan takes milliseconds, a search well under a second, a compare a few seconds
WORKERS = 8
MAX_WAITING = 256
_LIMITER: anyio.CapacityLimiter | None = None
_CACHE: OrderedDict[Hashable, Any] = OrderedDict()
_CACHE_SIZE = 512
_LOCK = threading.Lock()


def _limiter() -> anyio.CapacityLimiter:
    global _LIMITER
    if _LIMITER is None:
        _LIMITER = anyio.CapacityLimiter(WORKERS)
    return _LIMITER


def _cache_get(key: Hashable) -> Any:
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    return None


def _cache_put(key: Hashable, value: Any) -> None:
    with _LOCK:
        _CACHE[key] = value
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)


async def offload(fn: Callable[[], T], *, limit_s: float = LIMIT_S, cache_key: Hashable | None = None) -> T:
    """Run ``fn`` in a worker thread, at most ``limit_s`` seconds (504 past it, 503 when too many wait)."""
    if cache_key is not None:
        hit = _cache_get(cache_key)
        if hit is not None:
            return hit
    lim = _limiter()
    if lim.statistics().tasks_waiting >= MAX_WAITING:
        raise HTTPException(503, f"the server is busy ({MAX_WAITING} requests waiting); retry later")
    try:
        with anyio.fail_after(limit_s):
            out = await anyio.to_thread.run_sync(fn, abandon_on_cancel=True, limiter=lim)
    except TimeoutError:
        raise HTTPException(504, f"the computation took longer than the {limit_s:g} s limit") from None
    if cache_key is not None:
        _cache_put(cache_key, out)
    return out


def plan_cached(s: Scenario, preset: str = "quick") -> dict[str, Any]:
    """The plan of ``s`` (engine and checkpoint I/O) as JSON-ready data, cached per scenario."""
    return json.loads(plan_json(s, preset))


def plan_json(s: Scenario, preset: str = "quick") -> bytes:
    """:func:`plan_cached` as encoded JSON (what the plan endpoint sends), cached per scenario."""
    from wanka.service import assess

    key = ("plan", s.model_dump_json(), preset)
    hit = _cache_get(key)
    if hit is not None:
        return hit
    a = assess(s, ("engine", "storage"), preset=preset)
    if a.step is None:
        raise InfeasibleError(a.errors.get("engine", "the engine gave no result"))
    out = json.dumps(a.to_dict(), ensure_ascii=False, allow_nan=False).encode()
    _cache_put(key, out)
    return out


# ---------------------------------------------------------------- errors
def spec_error_detail(e: Exception) -> list[dict[str, Any]]:
    """FastAPI-style ``detail`` for a wanka error: ``loc`` ends in the field's dotted path."""
    field = getattr(e, "field", None)
    loc: list[str | int] = ["body"]
    if field:
        loc += [p for p in str(field).replace("[", ".").replace("]", "").split(".") if p]
    elif isinstance(e, InfeasibleError):
        loc.append("scenario")
    return [{"loc": loc, "msg": str(e), "type": "value_error"}]


def _finite_json(obj: Any) -> Any:
    """JSON-safe: non-finite floats become None (Python's json would write NaN)."""
    import math

    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite_json(v) for v in obj]
    return obj


def install_error_handlers(app: FastAPI) -> None:
    async def wanka_error(_: Request, e: Exception) -> JSONResponse:
        from wanka.store import StoreError

        if isinstance(e, StoreError):
            code = 404 if "no run" in str(e) else 400
            return JSONResponse({"detail": str(e)}, status_code=code)
        return JSONResponse({"detail": spec_error_detail(e)}, status_code=422)

    async def too_deep(_: Request, e: Exception) -> JSONResponse:
        return JSONResponse({"detail": [{"loc": ["body"], "msg": "nests too deep", "type": "value_error"}]}, 422)

    async def validation(_: Request, e: Exception) -> JSONResponse:
        assert isinstance(e, RequestValidationError)
        errs = []
        for d in e.errors()[:20]:
            errs.append({"loc": list(d.get("loc", ())), "msg": str(d.get("msg", ""))[:500], "type": d.get("type", "")})
        return JSONResponse({"detail": _finite_json(errs)}, status_code=422)

    async def pydantic_error(_: Request, e: Exception) -> JSONResponse:
        assert isinstance(e, ValidationError)
        errs = [
            {"loc": ["body", *d.get("loc", ())], "msg": str(d.get("msg", ""))[:500], "type": d.get("type", "")}
            for d in e.errors()[:20]
        ]
        return JSONResponse({"detail": _finite_json(errs)}, status_code=422)

    app.add_exception_handler(WankaError, wanka_error)
    app.add_exception_handler(ValidationError, pydantic_error)
    app.add_exception_handler(RecursionError, too_deep)
    app.add_exception_handler(RequestValidationError, validation)


async def read_json_body(request: Request) -> Any:
    """The request body as JSON (bounded by :class:`BodyLimit`); malformed JSON is a 422."""
    raw = await request.body()
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise SpecError(f"malformed JSON: {str(e)[:200]}", field="body") from None
    check_depth(data)
    return data


# ---------------------------------------------------------------- body size
class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is a 413 (by Content-Length, or while it streams)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for k, v in scope.get("headers", []):
            if k == b"content-length":
                try:
                    n = int(v)
                except ValueError:
                    n = self.limit + 1
                if n > self.limit:
                    await self._reject(send)
                    return
        seen = 0
        too_big = False
        started = False

        async def counted() -> Message:
            nonlocal seen, too_big
            if too_big:
                return {"type": "http.disconnect"}
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:
                    too_big = True
                    return {"type": "http.disconnect"}
            return msg

        async def guarded(msg: Message) -> None:
            nonlocal started
            if too_big:
                return  # the app's own reply to the cut-off body is replaced by the 413
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not too_big:
                raise
        if too_big and not started:
            await self._reject(send)

    async def _reject(self, send: Send) -> None:
        body = json.dumps({"detail": f"request body over the {self.limit:,}-byte limit"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


# ---------------------------------------------------------------- run store
def _db_path(request: Request) -> str:
    return str(request.app.state.db)


async def store_call(request: Request, fn: Callable[[Any], T]) -> T:
    """``fn(store)`` on the server's run store (``wanka serve --db``), in a worker thread."""
    from wanka.store import RunStore

    path = _db_path(request)

    def run() -> T:
        with RunStore(path) as st:
            return fn(st)

    return await offload(run)


async def save_plan_run(request: Request, s: Scenario, preset: str) -> dict[str, Any]:
    """Plan ``s`` and store it as a one-point run (mode ``plan``); returns the run."""
    from wanka.store import RunStore

    path = _db_path(request)

    def run() -> dict[str, Any]:
        t0 = time.time()
        d = plan_cached(s, preset)
        spec = d["scenario_spec"]
        h = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
        eng = d["engine"] or {}
        result = {
            "step_time_s": eng.get("step_time_s"),
            "mfu": eng.get("mfu"),
            "tokens_per_s_per_gpu": eng.get("tokens_per_s_per_gpu"),
            "time_to_train_s": eng.get("time_to_train_s"),
            "memory_bytes": (eng.get("memory_bytes") or {}).get("total"),
            "strategy": eng.get("strategy"),
        }
        with RunStore(path) as st:
            info = st.create_run(
                sweep_id=f"web: {s.name}", sweep_hash=h, mode="plan", spec=spec, total=1, source="wanka serve"
            )
            st.record_point(
                info.id,
                key=json.dumps({"scenario": s.name}),
                idx=0,
                status="done",
                result=result,
                started=t0,
                finished=time.time(),
                elapsed_s=time.time() - t0,
                worker="wanka serve",
            )
            st.set_status(info.id, "done")
            return st.run(info.id).to_dict()

    return await offload(run)
