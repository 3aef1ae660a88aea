"""`python -m p2pbench_report ...` (with scripts/ on sys.path) is the same as scripts/p2pbench-report."""

import sys

from p2pbench_report.cli import main

sys.exit(main())
