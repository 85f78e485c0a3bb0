"""Pictures: fabric drawings of a design and plots of what-if studies.

Modules: :mod:`~designer.pictures.drawing` (a drawing as data), :mod:`~designer.pictures.layout`
(a fabric graph grouped into a drawing), :mod:`~designer.pictures.draw` (a design's drawing) and
:mod:`~designer.pictures.plot` (Graphviz DOT, PNG and SVG renderers, the frontier plot). Nothing
is imported here: drawing needs networkx, PNG and SVG need matplotlib, and each command loads only
what it uses.
"""

__all__: list[str] = []
