# hpc-advisor: the two commands of the quick start, plus benchmarks.
#   make probe   create .venv, install hpc-advisor[all], probe this machine, print the emitted env
#   make test    create .venv-test (.[all,test] and the example plugins), install system tools where
#                possible (root + apt), run the whole test suite
#   make wheel   build dist/hpc_advisor-*.whl (python -m build in build/venv-wheel), the file sites pip install
#   make bench   print the benchmark figures (bench/bench_*.py, bench_fleet.py: 10,000 node profiles)
#   make bench-advice  judge the mpich-cma advice against an oracle (PROBES=5, ~10 min; not in bench)
#   make bench-verify  verify's false-alarm and detection rates on A/A runs (RUNS=20, ~10-20 min;
#                not in bench)
#   make bench-app  verify --app's A/A false-alarm rate and a planted slowdown (~10 min; not in bench)
#   make bench-stability  probes in a row: agreement, stability, wall time (PROBES=5,
#                PLUGIN=mpich-cma or all; ~26 s per full mpich-cma probe; not in bench)
#   make test-loaded  the whole suite three times with one core kept busy (RUNS=3)
PY      ?= python3
VENV    ?= .venv
TVENV   ?= .venv-test
PROFILE ?= out/profile.toml
PROBE_ARGS  ?=
PROBES      ?= 5
RUNS        ?= 20
ADVICE_ARGS ?=
PLUGIN      ?= mpich-cma
PYTEST_ARGS ?=

.PHONY: probe test test-loaded bench bench-advice bench-verify bench-app bench-stability system-deps wheel clean

probe: $(VENV)/.installed
	@mkdir -p $(dir $(PROFILE))
	@# a partial probe (exit 3) still emits what completed, then make fails with 3, so
	@# `make -s probe > site.sh && deploy` never ships a partial file unnoticed
	@rc=0; $(VENV)/bin/advisor probe -o $(PROFILE) $(PROBE_ARGS) >/dev/null || rc=$$?; \
	if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then exit $$rc; fi; \
	$(VENV)/bin/advisor emit --format env --profile $(PROFILE) || exit $$?; \
	if [ $$rc -eq 3 ]; then echo "make probe: partial probe (exit 3): see $(VENV)/bin/advisor show --profile $(PROFILE)" >&2; exit 3; fi

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e '.[all]'
	@touch $@

$(TVENV)/.installed: pyproject.toml docs/examples/advisor-example/pyproject.toml docs/examples/advisor-example-broken/pyproject.toml tests/reliability/fault_plugins/pyproject.toml
	$(PY) -m venv $(TVENV)
	$(TVENV)/bin/python -m pip install -q --upgrade pip
	$(TVENV)/bin/python -m pip install -q -e '.[all,test]' -e docs/examples/advisor-example -e docs/examples/advisor-example-broken -e tests/reliability/fault_plugins
	@touch $@

# Real shells, module systems, libseccomp, Slurm and munge for the integration tests (Debian packages).
# Needs root and apt-get; elsewhere the tests that need them skip with the reason.
system-deps:
	@bash scripts/system-deps.sh

test: system-deps $(TVENV)/.installed
	PATH="$(CURDIR)/$(TVENV)/bin:$$PATH" $(TVENV)/bin/python -m pytest $(PYTEST_ARGS)

test-loaded: system-deps $(TVENV)/.installed
	TVENV=$(TVENV) PYTEST_ARGS="$(PYTEST_ARGS)" bash scripts/test-loaded.sh $(or $(RUNS),3)

# a small venv with only the build frontend (not the test venv and its tools)
wheel:
	$(PY) -m venv build/venv-wheel
	build/venv-wheel/bin/python -m pip install -q build
	build/venv-wheel/bin/python -m build --wheel --outdir dist .

bench: $(VENV)/.installed
	@for b in $(filter-out bench/bench_verify_aa.py bench/bench_app_verify.py bench/bench_advice_stability.py,$(wildcard bench/bench_*.py)); do \
		echo "== $$b"; $(VENV)/bin/python $$b || exit 1; done

# Long (about 10 minutes at PROBES=5): N probes of mpich-cma against an exhaustive oracle.
bench-advice: $(VENV)/.installed
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/python bench/advice_quality.py --probes $(PROBES) $(ADVICE_ARGS)

# Long (about 30-50 s per run on a 2-core VM): verify's A/A false-alarm rate and the detection
# rate of a planted 10 % regression (bench/bench_verify_aa.py --help).
bench-verify: $(VENV)/.installed
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/python bench/bench_verify_aa.py --runs $(RUNS)

# Long (about 10 minutes on a 2-core VM): verify --app's A/A false-alarm rate on the mpi4py halo
# exchange, and how often a planted 10 % slowdown is called (bench/bench_app_verify.py --help).
bench-app: $(VENV)/.installed
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/python bench/bench_app_verify.py

# Long (about 26 s per full mpich-cma probe, 45 s per whole one, on a 2-core VM): PROBES probes
# of PLUGIN (all: the whole probe) in a row; how often
# they agree, their stability figures and wall times (bench/bench_advice_stability.py --help);
# the profiles are kept in out/bench-stability.
bench-stability: $(VENV)/.installed
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/python bench/bench_advice_stability.py --probes $(PROBES) --plugin $(PLUGIN) --keep out/bench-stability $(ADVICE_ARGS)

clean:
	rm -rf $(VENV) $(TVENV) out build dist *.egg-info
