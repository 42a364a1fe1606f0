"""The MPI layer of the harness: what every MPI plugin measures with, whatever its library.

* ``rank``: the 2-rank worker (identity, smoke, sweep and paired modes, the placement and
  security gather), run under the launcher by module name (``RANK``);
* ``loops``, ``paired``: its timed loops and its paired mode (a threshold switched at run time
  by the library's switch);
* ``sibling``: the live sibling ``process_vm_readv`` test (standard library only);
* ``deny_cma``: a launcher prefix that makes the CMA calls fail (seccomp), for tests and
  recorded data (``DENY_CMA``);
* ``causes``: why CMA fails, and the remedies (pure);
* ``usability``: the CMA verdict from the live probes, and the finding of a setting that turns
  CMA on where it fails;
* ``sweep``: the sweep plan (sizes, repeats, seconds per size) from a context.

Only module names live here; nothing is imported, so mpi4py never loads with this package.
"""

#: The shared worker, for ``advisor.measure.run_mpi(RANK, ...)``.
RANK = "advisor.measure.mpi.rank"
#: The seccomp launcher prefix: ``python -m advisor.measure.mpi.deny_cma -- COMMAND``.
DENY_CMA = "advisor.measure.mpi.deny_cma"
