"""The FastAPI application: the API under ``/api``, the pages, the static assets, OpenAPI at ``/docs``.

Everything the pages need is served from the package (``wanka/web/static``): no CDN, nothing fetched
at run time. The OpenAPI page at ``/docs`` is Swagger UI served from the ``swagger-ui-bundle``
package (``/docs-assets``); ``/openapi.json`` is the schema.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from wanka.web.api import router as api_router
from wanka.web.pages import router as pages_router
from wanka.web.runtime import BodyLimit, install_error_handlers

__all__ = ["create_app"]

STATIC = Path(__file__).resolve().parent / "static"


def create_app(db: str | Path = "wanka.db") -> FastAPI:
    """The app; ``db`` is the run store the run endpoints and the past-runs page use."""
    from importlib import metadata

    try:
        version = metadata.version("wanka")
    except metadata.PackageNotFoundError:  # pragma: no cover
        version = "dev"
    app = FastAPI(
        title="wanka",
        version=version,
        description="A digital twin of 万卡 (10,000+ GPU) AI training clusters: step time, MFU, memory, "
        "failures and ETTR, power, energy and cost. Every endpoint runs the service layer "
        "(`wanka.service.assess`) that the CLI uses; a bad field is a 422 naming it.",
        docs_url=None,
        redoc_url=None,
    )
    app.state.db = Path(db)
    install_error_handlers(app)
    app.include_router(api_router)
    app.include_router(pages_router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _docs(app)
    app.add_middleware(BodyLimit)
    return app


def _docs(app: FastAPI) -> None:
    """Swagger UI at /docs from the locally installed ``swagger-ui-bundle`` (nothing from a CDN)."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse
    from swagger_ui_bundle import swagger_ui_path

    app.mount("/docs-assets", StaticFiles(directory=swagger_ui_path), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title="wanka API",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/docs-assets/favicon-32x32.png",
        )
