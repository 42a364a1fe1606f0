"""``--option`` keys a run's probes declare (``advisor.probe.option_readers``)."""

from advisor.probe import option_readers


class Declares:
    def __init__(self, keys):
        self.option_keys = keys


class Silent:  # a third-party probe of before option_keys: its keys cannot be known
    pass


def test_unread_keys_are_those_no_probe_declares():
    probes = {"a": Declares({"launches": "", "rounds": ""}), "b": Declares({})}
    assert option_readers({"launches": "8", "lanches": "8", "against": "env"}, probes) == (
        ["lanches"], [])  # "against" is the core's own key


def test_a_probe_that_declares_nothing_is_named():
    probes = {"a": Declares({"rounds": ""}), "z": Silent()}
    assert option_readers({"vendor.mib": "4"}, probes) == (["vendor.mib"], ["z"])


def test_builtin_probes_declare_what_they_read():
    from advisor.plugins import load

    probes = load().probes
    for name in ("host-buffer", "memory-pool-host", "mpich-cma", "openmpi"):
        assert getattr(probes[name], "option_keys", None), name
    assert option_readers({"alloc-size": "8MiB", "launches": "8", "sweep_mib": "64",
                           "extra_rounds": "2", "sizes": "1024"}, probes) == ([], [])


def test_option_values_are_judged_with_the_key_named():
    import pytest

    from advisor.errors import BadInputError
    from advisor.probe import option_choice, option_number

    assert option_number({"launches": " 8"}, "launches") == 8
    assert option_number({}, "launches") is None
    assert option_number({"target_s": "0.5"}, "target_s", float) == 0.5
    for opts, key, kind, word in (({"launches": "abc"}, "launches", int, "not an integer"),
                                  ({"launches": "0"}, "launches", int, "must be >= 1"),
                                  ({"target_s": "x"}, "target_s", float, "not a number")):
        with pytest.raises(BadInputError, match=f"--option {key}='.*': {word}"):
            option_number(opts, key, kind, minimum=1)
    assert option_choice({"traffic": "reused"}, "traffic", ("both", "reused")) == "reused"
    with pytest.raises(BadInputError, match="expected one of both, reused"):
        option_choice({"traffic": "one"}, "traffic", ("both", "reused"))


def test_builtin_probes_judge_their_values_before_measuring():
    import pytest

    from advisor.errors import BadInputError
    from advisor.plugins import load

    probes = load().probes
    bad = {"mpich-cma": {"later_sizes": "some"}, "openmpi": {"extra_rounds": "-1"},
           "host-buffer": {"sweep_mib": "64,x"}, "memory-pool-host": {"alloc-size": "8MB*x"},
           "memory-pool-device": {"pool-limit": "lots"}}
    for name, opts in bad.items():
        with pytest.raises(BadInputError, match=f"--option {next(iter(opts))}"):
            probes[name].check_options(opts)
    for name in bad:  # good values pass
        probes[name].check_options({"sizes": "1024,4096", "launches": "8", "nbytes": "0",
                                    "alloc-size": "8MiB*4", "limits": "0"})
