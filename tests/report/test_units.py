"""advisor.specs.units: the human-readable quantities of report and show (binary sizes,
decimal bandwidths, ns/µs/ms/s)."""

from __future__ import annotations

import math

import pytest

from advisor.specs.units import (format_bandwidth, format_bytes, format_count, format_number,
                                  format_ratio, format_seconds, format_value, sizes_in_text)


@pytest.mark.parametrize("n, text", [
    (0, "0 B"), (3, "3 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"),
    (65536, "64 KiB"), (2 << 20, "2 MiB"), (268435456, "256 MiB"), (3 << 30, "3 GiB"),
    (5 << 40, "5 TiB"), (1000 * 1024, "1000 KiB"), (-4096, "-4 KiB"),
])
def test_bytes_are_binary_multiples(n, text):
    assert format_bytes(n) == text


@pytest.mark.parametrize("bps, text", [
    (1.075e10, "10.8 GB/s"), (2.479e10, "24.8 GB/s"), (8.5e8, "850 MB/s"), (1e9, "1 GB/s"),
    (999.0, "999 B/s"), (1.5e3, "1.5 kB/s"), (2e12, "2 TB/s"), (0, "0 B/s"),
])
def test_bandwidths_are_decimal_multiples(bps, text):
    assert format_bandwidth(bps) == text


@pytest.mark.parametrize("s, text", [
    (2.5e-6, "2.5 µs"), (0.012, "12 ms"), (3.0, "3 s"), (350e-9, "350 ns"), (5e-10, "0.5 ns"),
    (120.0, "120 s"), (0, "0 s"),
])
def test_durations_pick_the_prefix(s, text):
    assert format_seconds(s) == text


def test_ratio_count_number_and_other_units():
    assert format_ratio(1.8) == "1.8x"
    assert format_count(4096) == "4096" and format_count(2.5) == "2.5"
    assert format_number(1024) == "1024" and format_number(0.000123) == "0.000123"
    assert format_number(1.23456, digits=2) == "1.2"
    assert format_value(65536, "bytes") == "64 KiB"
    assert format_value(1.2e10, "bytes/s") == "12 GB/s"
    assert format_value(4e-6, "s") == "4 µs"
    assert format_value(1.02, "ratio") == "1.02x"
    assert format_value(3.2, "pages") == "3.2 pages"
    assert format_value(7, "") == "7"


def test_non_finite_values_never_raise():
    assert format_bytes(math.nan) == "nan B"
    assert format_bandwidth(math.inf) == "inf B/s"
    assert format_seconds(-math.inf) == "-inf s"


def test_sizes_in_text():
    assert sizes_in_text("threshold 268435456 bytes at 4096 B") == "threshold 256 MiB at 4 KiB"
    assert sizes_in_text("100000 bytes, 12 B") == "97.66 KiB, 12 B"
    assert sizes_in_text("no size here: 3 runs") == "no size here: 3 runs"
    # a remainder rounding would hide stays: Umpire's block + alignment (LLNL/Umpire#881) is
    # not a large-page multiple, and "1 GiB" would say it is
    assert sizes_in_text("blocks of 1073741840 B, not multiples of the 2097152 B large page") \
        == "blocks of 1 GiB + 16 B, not multiples of the 2 MiB large page"
    # one byte below a threshold is not the threshold
    assert sizes_in_text("16384 at 16383 B: 0") == "16384 at 16383 B: 0"
