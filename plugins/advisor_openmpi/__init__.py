"""The Open MPI plugin of hpc-advisor: shared-memory paths (ob1 + sm + smsc, UCX) of Open MPI 5."""
