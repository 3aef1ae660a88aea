"""scripts/check-vector-accesses.py on small PTX texts: a 16-byte store or load split into four
4-byte ones is found and named, whole vectors and a tail's accesses under branches are not, and
a file with no global access is an error (nothing was checked)."""
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "check-vector-accesses.py"

SPLIT_STORE = """
\tld.global.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd10];
\tadd.s64 \t%rd20, %rd21, %rd22;
\tst.global.f32 \t[%rd20], %f1;
\tst.global.f32 \t[%rd20+4], %f2;
\tst.global.f32 \t[%rd20+8], %f3;
\tst.global.f32 \t[%rd20+12], %f4;
"""
WHOLE_STORE = """
\tld.global.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd10];
\tst.global.v4.u32 [%rd20], {%r1, %r2, %r3, %r4};
"""
TAIL = """
\tsetp.lt.s32 \t%p1, %r9, 2;
\t@%p1 bra \t$L__BB0_2;
\tst.global.f32 \t[%rd30], %f1;
$L__BB0_2:
\t@%p2 bra \t$L__BB0_3;
\tst.global.f32 \t[%rd30+4], %f2;
$L__BB0_3:
\t@%p3 bra \t$L__BB0_4;
\tst.global.f32 \t[%rd30+8], %f3;
$L__BB0_4:
\t@%p4 bra \t$L__BB0_5;
\tst.global.f32 \t[%rd30+12], %f4;
$L__BB0_5:
"""
SPLIT_LOAD = """
\tld.global.u32 \t%r1, [%rd40+16];
\tld.global.u32 \t%r2, [%rd40+20];
\tld.global.u32 \t%r3, [%rd40+24];
\tld.global.u32 \t%r4, [%rd40+28];
"""


def check(tmp_path, *texts):
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"k{i}.ptx"
        path.write_text(text)
        paths.append(str(path))
    return subprocess.run([sys.executable, str(SCRIPT), *paths], capture_output=True, text=True)


def test_a_split_store_fails_naming_file_and_line(tmp_path):
    r = check(tmp_path, WHOLE_STORE, SPLIT_STORE)
    assert r.returncode == 1, r
    assert "k1.ptx:4: a 16-byte store through %rd20 split into four" in r.stderr
    assert "k0.ptx" not in r.stderr


def test_a_split_load_fails(tmp_path):
    r = check(tmp_path, SPLIT_LOAD)
    assert r.returncode == 1, r
    assert "16-byte load through %rd40" in r.stderr


def test_whole_vectors_and_a_tail_under_branches_pass(tmp_path):
    r = check(tmp_path, WHOLE_STORE, TAIL)
    assert r.returncode == 0, r
    assert "k0.ptx: 2 global accesses, 0 16-byte accesses split in four" in r.stdout
    assert "k1.ptx: 4 global accesses, 0" in r.stdout


def test_nothing_to_check_is_an_error(tmp_path):
    r = check(tmp_path, "\tadd.s32 \t%r1, %r2, %r3;\n")
    assert r.returncode == 2, r
    assert "nothing was checked" in r.stderr
    assert subprocess.run([sys.executable, str(SCRIPT)], capture_output=True).returncode == 2
