"""The report's figures (matplotlib, Agg backend chosen once in backend.py).

figures.py builds every figure of a results set; the other modules each draw one kind (series,
bars, shapes, matrices, patterns, atomics, interference, the compare page's ratio) from the
package's data modules (cases, loader, pair_figures, ratios), which never import from here.
"""
