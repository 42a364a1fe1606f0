"""Fleets: probe every node of a partition through the scheduler, group nodes into machine
classes, write one profile per class and name outlier nodes (``advisor fleet``)."""
