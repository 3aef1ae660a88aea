"""scripts/lib/skip_reasons.py: the reasons of CTest's skipped tests, read from LastTest.log into
run-ctest.sh's skip log."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "lib" / "skip_reasons.py"

LOG = """Start testing: Nov 29 15:17 UTC
----------------------------------------------------------
3/9 Testing: results_schema_jsonschema
3/9 Test: results_schema_jsonschema
Command: "python3" "-m" "pytest"
Output:
----------------------------------------------------------
sss
SKIPPED [2] tests/schema/test_validators_agree.py:17: needs the Python package jsonschema
SKIPPED [5] tests/schema/test_validators_agree.py:17: needs the Python package jsonschema
7 skipped in 0.10s
<end of output>
Test time =   0.81 sec
----------------------------------------------------------
Test Pass Reason:
Skip regular expression found in output. Regex=[
[0-9]+ skipped in ]
"results_schema_jsonschema" end time: Nov 29 15:17 UTC
----------------------------------------------------------

4/9 Testing: test_core
4/9 Test: test_core
Output:
----------------------------------------------------------
[  PASSED  ] 300 tests.
<end of output>
Test time =   1.00 sec
----------------------------------------------------------
Test Passed.
----------------------------------------------------------

5/9 Testing: test_copy_kernels
5/9 Test: test_copy_kernels
Output:
----------------------------------------------------------
SKIPPED: needs 1 GPU, 0 visible
<end of output>
Test time =   0.16 sec
----------------------------------------------------------
Test Skipped.
----------------------------------------------------------

6/9 Testing: odd_skip
6/9 Test: odd_skip
Output:
----------------------------------------------------------
checking something
no compiler for the part that needs one
<end of output>
----------------------------------------------------------
Test Skipped.
"""


def run(tmp_path, skip_log_text):
    log, skips = tmp_path / "LastTest.log", tmp_path / "skipped-tests.txt"
    log.write_text(LOG)
    skips.write_text(skip_log_text)
    result = subprocess.run([sys.executable, str(SCRIPT), str(log), str(skips)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return skips.read_text().splitlines()


def test_every_skip_gets_its_reason_once_and_passes_stay_out(tmp_path):
    lines = run(tmp_path, "test_copy_kernels: needs 1 GPU, 0 visible: GPU tests run on a GPU node\n")
    assert lines == ["test_copy_kernels: needs 1 GPU, 0 visible: GPU tests run on a GPU node",  # its own, kept
                     "results_schema_jsonschema: needs the Python package jsonschema",       # distinct reasons
                     "odd_skip: no compiler for the part that needs one"]                    # the last line


def test_no_log_adds_nothing(tmp_path):
    skips = tmp_path / "skipped-tests.txt"
    result = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "missing.log"), str(skips)])
    assert result.returncode == 0 and not skips.exists()
