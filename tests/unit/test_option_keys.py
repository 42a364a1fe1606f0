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
