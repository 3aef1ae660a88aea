"""Figures in README.md and docs/*.md, checked against the results files they cite.

A figure a page takes from a committed results file carries a marker right after it, an HTML
comment the rendered page does not show:

    396<!--fig file=results/h200-nv18/default.json method=ce direction=push mode=uni bytes=1G--> GB/s
    369.4–371.6<!--fig method=ldst,tma direction=push bytes=1G--> GB/s     (a range: min–max of the rows)
    82.8<!--calc 100*ce/peak-->%                                           (derived from figures with id=)
    6.9<!--fig file=results/.../summary.txt match="default\\.json: ([0-9.]+) s"--> s   (a text file)
    16<!--param--> SMs                                                     (a case's parameter, not a figure)

`<!--figs KEY=VALUE ...-->` sets defaults: for its paragraph, list item or table row (and, in
the paragraph a table or list follows, for every row or item of it); in a table's header row,
for that column. A figure's own keys win over its row's, its row's over its column's, those over
the caption's. markers.py lists the keys.

Every number in a block that cites a results file (a `results/...` path, or a file or folder
name in code quotes that exists under results/) must be marked, or be a parameter by its unit
(512 B, 16 SMs, 4 ranks: tokens.py); the file a marker reads must be one the block (or its
caption) cites, and a complete results file (`incomplete` false) whose commit can be traced (not
`meta.provenance` "unknown": tests/committed_results); a file that cannot be traced is cited
nowhere (sources.py: untraceable_reason). The value must round to the
written figure at the figure's own precision. `scripts/docs-figures --write` rewrites every
marked figure from its file, so a re-measured file updates the pages.
"""
