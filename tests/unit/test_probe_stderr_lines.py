"""The one-line warnings ``advisor probe`` writes to stderr (the whole text is in ``show``)."""

from advisor.cli.probe_cmd import first_clause


def test_first_clause_is_cut_outside_brackets_and_marked():
    # the recorded cma-regret-left message: the old split at the first "; " left
    # "(0.69, the advice 0.68" open and unmarked
    msg = ("the advice (threshold 8 KiB) is measurably beaten at some sizes, and threshold "
           "12 KiB measured a higher worst ratio (0.69, the advice 0.68; 1 = the best at every "
           "size), but within noise, so the advice is the tie's member nearest the library "
           "default: bandwidth at 12 KiB: x0.68 of the best (CI up to 0.97); bandwidth at "
           "16 MiB: x0.88 of the best (CI up to 0.93)")
    first = first_clause(msg)
    assert first.endswith("(CI up to 0.97) …")
    assert first.count("(") == first.count(")")
    assert first_clause("one clause only") == "one clause only"
    assert first_clause("a; b") == "a …"
