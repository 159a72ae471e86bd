"""``wanka serve``: the web pages and the HTTP API (FastAPI, in the ``web`` extra).

>>> from wanka.web import create_app  # doctest: +SKIP
"""

from wanka.web.app import create_app

__all__ = ["create_app"]
