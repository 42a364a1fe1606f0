"""Built-in hpc-advisor plugin: mpich-cma."""
