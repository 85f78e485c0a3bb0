"""Rendering the pages: the Jinja2 environment, the inline style and script, and the content security policy.

Templates are package data (``templates/``) rendered with autoescaping on, so every text from a
design file (names, SKUs, sources, reasons) reaches the page escaped. The style sheet and the
script are inlined; the page's content security policy admits exactly those two (by their
SHA-256) and nothing else: no request leaves the file, and text that slipped past escaping could
still not run a script.
"""

from __future__ import annotations

__all__ = ["CSP_TEMPLATE", "content_security_policy", "render_page"]

import base64
import hashlib
from functools import lru_cache
from importlib import resources
from typing import Any

# default-src 'none' forbids every fetch (scripts, styles, images, fonts, frames, connections);
# the inline SVGs are part of the document and need no source.
CSP_TEMPLATE = ("default-src 'none'; style-src '{style}'; script-src '{script}'; img-src data:; "
                "base-uri 'none'; form-action 'none'")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def content_security_policy(style: str, script: str) -> str:
    """The policy admitting exactly the inline ``style`` and ``script`` (CSP Level 2 hash sources)."""
    return CSP_TEMPLATE.format(style=_sha256(style), script=_sha256(script))


def _asset(name: str) -> str:
    return resources.files("designer.report.html").joinpath("templates", name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _environment() -> Any:
    import jinja2  # only the HTML pages need it

    return jinja2.Environment(
        loader=jinja2.PackageLoader("designer.report.html", "templates"),
        autoescape=True,  # every template is HTML
        undefined=jinja2.StrictUndefined,  # a misspelt field fails the tests, not the reader
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_page(template: str, page: Any, *, footer: str, generator: str) -> str:
    """Render ``template`` with ``page`` (a frozen view dataclass), the inline assets and the policy.

    Returns:
        The HTML document, deterministic for the same page.
    """
    style = "\n" + _asset("style.css")
    script = "\n" + _asset("table.js")
    return _environment().get_template(template).render(
        page=page, style=style, script=script, csp=content_security_policy(style, script), footer=footer,
        generator=generator)
