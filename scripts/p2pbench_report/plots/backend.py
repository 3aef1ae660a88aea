"""matplotlib's backend, chosen in one place: Agg, which draws without a display (the report runs
on headless nodes and in CI). Every module that draws imports this one; matplotlib.use only has
to come before pyplot is imported, which this package never does, so import order is free."""

import matplotlib

matplotlib.use("Agg")
