"""Fleets: probe every node of a partition through the scheduler, group nodes into machine
classes, write one profile per class and name outlier nodes (``advisor fleet``).

Modules: ``classes`` (the class fingerprint), ``headline`` (the figures probes offer for
comparison), ``thin`` (small per-node profiles), ``nodes`` (reading a directory of untrusted
node files), ``outliers`` (median ± k·MAD, baseline, floors), ``pool`` (pooled evidence and
class profiles), ``report`` (``build_report``), ``submit`` (``advisor fleet probe``)."""
