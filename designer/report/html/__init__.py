"""HTML pages for people who approve a design: ``designer report DESIGN -o review.html`` and ``diff --format html``.

One self-contained file per page (styles, script and SVG charts inline; a content security
policy that forbids every request), built with Jinja2 templates that escape all text. Modules:
:mod:`~designer.report.html.review` (the design's page), :mod:`~designer.report.html.diffpage`
(the diff's page), :mod:`~designer.report.html.costs`, :mod:`~designer.report.html.workloads` and
:mod:`~designer.report.html.bomtable` (its sections), :mod:`~designer.report.html.charts` (SVG),
:mod:`~designer.report.html.band` (the model's error band), :mod:`~designer.report.html.view`
(what templates lay out) and :mod:`~designer.report.html.page` (rendering).
"""

from __future__ import annotations

__all__ = ["RenderedPage", "render_review", "render_diff_html"]

from dataclasses import dataclass

from designer import __version__
from designer.catalog.types import Catalog
from designer.design.diff import DesignDiff
from designer.design.model import Design

_GENERATOR = f"designer {__version__}"


@dataclass(frozen=True, slots=True)
class RenderedPage:
    """An HTML document and the warnings met while making it (for the command to print)."""

    html: str
    warnings: tuple[str, ...]


def render_review(design: Design, catalog: Catalog | None = None) -> RenderedPage:
    """The design review page of ``design`` (see :func:`designer.report.html.review.build_review`).

    Args:
        design: the design.
        catalog: the catalog the design was made with, to draw the fabric and mark soft prices.
    """
    from designer.report.html import band, page, review

    view, warnings = review.build_review(design, catalog, band.load_band(), _GENERATOR)
    footer = (f"Rendered by {_GENERATOR} from the design file of {design.spec_name} (made by designer "
              f"{design.tool_version}). Self-contained: no part of this page is fetched from a network.")
    return RenderedPage(page.render_page("review.html.j2", view, footer=footer, generator=_GENERATOR), warnings)


def render_diff_html(diff: DesignDiff) -> str:
    """The page of a diff: the same changes as ``diff --format markdown``, from the same data."""
    from designer.report.html import diffpage, page

    view = diffpage.build_diff_page(diff)
    footer = f"Rendered by {_GENERATOR}. Self-contained: no part of this page is fetched from a network."
    return page.render_page("diff.html.j2", view, footer=footer, generator=_GENERATOR)
