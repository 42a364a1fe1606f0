"""Which sizes the memcpy sweep measures (pure planning; no timing)."""

from advisor_host_buffer import measure_sweep as sweep

MiB = 1 << 20
#: glibc 2.36's default non-temporal threshold on the 2-core reference VM (ld.so --list-tunables)
CURRENT = 0xB580000  # 181.5 MiB


def test_sweep_stops_at_the_first_streamed_size():
    assert sweep.plateau_capped(sweep.SWEEP_SIZES, CURRENT) == [1 << k for k in range(20, 29)]
    assert sweep.plateau_capped(sweep.QUICK_SWEEP_SIZES, CURRENT) == sweep.QUICK_SWEEP_SIZES
    # a threshold above every size: nothing is streamed, the list stays whole
    assert sweep.plateau_capped(sweep.SWEEP_SIZES, 1 << 40) == sweep.SWEEP_SIZES


def test_followups_keep_affected_sizes_one_control_and_the_plateau():
    sizes = sweep.plateau_capped(sweep.SWEEP_SIZES, CURRENT)
    follow = sweep.followup_sizes(sizes, 64 * MiB, CURRENT)
    # [tuned, current) = 64, 128 MiB change code path; 32 MiB is the control, 256 MiB the plateau
    assert follow == [32 * MiB, 64 * MiB, 128 * MiB, 256 * MiB]
    # no control below when the tuned value is the smallest size
    assert sweep.followup_sizes(sizes, 1 * MiB, CURRENT)[0] == 1 * MiB
    # without glibc's current threshold the affected range is unknown: every size
    assert sweep.followup_sizes(sizes, 64 * MiB, None) == sizes
