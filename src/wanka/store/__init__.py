"""Run store: sweep runs and their points in SQLite, resumable after a crash; CSV/JSON/Parquet export.

>>> import tempfile, pathlib
>>> with RunStore(pathlib.Path(tempfile.mkdtemp()) / "runs.db") as s:
...     r = s.create_run(sweep_id="demo", sweep_hash="h", mode="plan", spec={}, total=1, source=None)
...     s.record_point(r.id, key='{"cluster.nodes":8}', idx=0, status="done", result={"summary": {}})
...     s.run(r.id).done_points
1
"""

from wanka.store.db import DEFAULT_DB, PointRecord, RunInfo, RunStore, StoreError
from wanka.store.export import FORMATS, export_run, flat_rows

__all__ = ["DEFAULT_DB", "FORMATS", "PointRecord", "RunInfo", "RunStore", "StoreError", "export_run", "flat_rows"]
