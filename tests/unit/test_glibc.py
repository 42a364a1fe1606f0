"""advisor.libraries.glibc_tunables: ld.so --list-tunables read from recorded output (glibc 2.36, Debian 12 on
KVM) and from the loader of this machine."""

from __future__ import annotations

import pytest
from support import DATA

from advisor.libraries.glibc_tunables import Tunable, find_ld_so, list_tunables, parse_list_tunables, parse_number

RECORDED = DATA / "host_buffer" / "list-tunables-glibc2.36-kvm.txt"


@pytest.mark.parametrize("text,want", [
    ("0x6300000", 0x6300000), ("0X1f", 31), ("010", 8), ("0", 0), ("2", 2), (" 64 ", 64),
    ("0x", None), ("08", None), ("-1", None), ("1_000", None), ("1e3", None), ("", None),
    (None, None),
])
def test_parse_number_reads_as_glibc_does(text, want):
    assert parse_number(text) == want


def test_recorded_list_parses_numbers_ranges_and_strings():
    t = parse_list_tunables(RECORDED.read_text())
    assert len(t) == len([ln for ln in RECORDED.read_text().splitlines() if ln.startswith("glibc.")])
    assert t["glibc.rtld.nns"] == Tunable("glibc.rtld.nns", 4, 1, 16, "0x4")
    assert t["glibc.rtld.dynamic_sort"] == Tunable("glibc.rtld.dynamic_sort", 2, 1, 2, "2")
    hw = t["glibc.cpu.hwcaps"]  # a string tunable: no value set, no range
    assert (hw.value, hw.min, hw.max) == ("", None, None)


def test_garbage_lines_are_skipped():
    assert parse_list_tunables("ld.so: unknown option\n\nnot a tunable: 1\n") == {}


def test_live_list_reflects_glibc_tunables_of_the_child():
    if find_ld_so() is None or not list_tunables():
        pytest.skip("this loader cannot list its tunables (glibc < 2.33)")
    if "glibc.malloc.hugetlb" not in list_tunables():
        pytest.skip("glibc.malloc.hugetlb needs glibc >= 2.35")
    base = list_tunables()["glibc.malloc.hugetlb"]
    tuned = list_tunables({"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"})["glibc.malloc.hugetlb"]
    assert base.min == tuned.min == 0 and tuned.value == 1
