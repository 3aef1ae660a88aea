"""Labels beside scatter points that never overprint one another.

Points of a trade figure often sit on top of each other (K=4 granted 8 SMs measures what K=8
does), and a fixed offset then prints two labels into one smudge ("K=8" over "K=4→8"). Each label
here is tried at offsets around its point, nearest first, and takes the first spot whose box
overlaps no label already placed, no data point and stays inside the axes; a label pushed past the
first ring gets a thin leader line to its point. The boxes are the real text extents, measured
after the figure's layout is fixed (labels are kept out of the layout so that they cannot move it).
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.transforms import Bbox

# (dx, dy) in points, ha, va: right-above, right-below, left-above, left-below, above, below.
DIRECTIONS = ((6, 4, "left", "bottom"), (6, -4, "left", "top"), (-6, 4, "right", "bottom"),
              (-6, -4, "right", "top"), (0, 8, "center", "bottom"), (0, -8, "center", "top"))
RINGS = (1, 2, 3, 4.5, 6)
POINT_HALF_WIDTH = 5.0  # pixels kept free around each data point (its marker)
GAP = 2.0               # pixels between two labels


@dataclass(frozen=True)
class PointLabel:
    x: float
    y: float
    text: str
    color: str = "0.2"


def _renderer(figure):
    """A renderer that measures text, after the layout has placed the axes."""
    if not isinstance(figure.canvas, FigureCanvasAgg):
        FigureCanvasAgg(figure)  # attaches itself as figure.canvas; savefig still picks by format
    figure.draw_without_rendering()
    return figure.canvas.get_renderer()


def _overlap(box: Bbox, others: list[Bbox]) -> float:
    """Area of `box` covered by the other boxes (0: free)."""
    total = 0.0
    for other in others:
        width = min(box.x1, other.x1) - max(box.x0, other.x0)
        height = min(box.y1, other.y1) - max(box.y0, other.y0)
        if width > 0 and height > 0:
            total += width * height
    return total


def _point_boxes(ax, labels: list[PointLabel]) -> list[Bbox]:
    boxes = []
    for label in labels:
        x, y = ax.transData.transform((label.x, label.y))
        boxes.append(Bbox.from_extents(x - POINT_HALF_WIDTH, y - POINT_HALF_WIDTH, x + POINT_HALF_WIDTH,
                                       y + POINT_HALF_WIDTH))
    return boxes


def _best_spot(annotation, renderer, frame: Bbox, taken: list[Bbox]) -> tuple[tuple, Bbox]:
    """The first free spot, nearest ring first; else the one least covered."""
    best = None
    for ring in RINGS:
        for dx, dy, ha, va in DIRECTIONS:
            spot = (dx * ring, dy * ring, ha, va, ring)
            annotation.xyann = spot[:2]
            annotation.set_ha(ha)
            annotation.set_va(va)
            box = annotation.get_window_extent(renderer).padded(GAP)
            outside = 0.0 if frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1) else 1e9
            cost = outside + _overlap(box, taken)
            if cost == 0:
                return spot, box
            if best is None or cost < best[0]:
                best = (cost, spot, box)
    return best[1], best[2]


def place_point_labels(ax, labels: list[PointLabel], fontsize: float = 8) -> list:
    """Annotates each point with its text where it overprints nothing; returns the annotations.
    Call it last, once the axes' limits are final."""
    renderer = _renderer(ax.figure)
    frame = ax.get_window_extent(renderer)
    taken = _point_boxes(ax, labels)
    annotations = []
    for index, label in enumerate(labels):
        probe = ax.annotate(label.text, (label.x, label.y), textcoords="offset points", xytext=(0, 0), fontsize=fontsize)
        others = taken[:index] + taken[index + 1:]  # its own point may touch its label
        (dx, dy, ha, va, ring), box = _best_spot(probe, renderer, frame, others)
        probe.remove()
        # far from its point: a leader line says whose label it is
        leader = {"arrowstyle": "-", "color": label.color, "linewidth": 0.6, "shrinkA": 0, "shrinkB": 3}
        annotation = ax.annotate(label.text, (label.x, label.y), textcoords="offset points", xytext=(dx, dy),
                                 ha=ha, va=va, fontsize=fontsize, color=label.color,
                                 arrowprops=leader if ring > 1 else None,
                                 bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none",
                                       "alpha": 0.75})  # a curve crossing the label stays behind it
        annotation.set_in_layout(False)
        taken.append(box)
        annotations.append(annotation)
    return annotations
