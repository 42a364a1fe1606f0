"""Built-in hpc-advisor plugin: memory-pool."""
