"""Built-in hpc-advisor plugin: host-buffer."""
