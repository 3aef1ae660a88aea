"""p2pbench-report: plots, comparisons, regression checks, CSV export and importers for
p2pbench results files (schema/results.schema.json).

Every subcommand goes through one loader (loader.py), which validates the file against the
repository's JSON Schema and flattens its rows into a pandas DataFrame.
"""

__version__ = "0.1.0"
