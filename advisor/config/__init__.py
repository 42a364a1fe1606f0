"""Configuration scopes, like Spack's: defaults < site < user < environment < command line.

One TOML schema (:mod:`advisor.config.schema`) for every scope file: pinned and excluded
settings, accepted recommendations, the MPI launcher, plugin selection, fleet rules and the
profile store.  :mod:`advisor.config.scopes` finds and reads the scopes with file and line of
every key (:mod:`advisor.config.locate`) and merges them; :mod:`advisor.config.apply` applies
pins, exclusions and accepted recommendations to a profile before ``advisor emit``;
:mod:`advisor.config.explain` builds the rows of ``advisor explain``;
:mod:`advisor.config.write` changes a scope file keeping its comments.  docs/config.md is the
user's guide.
"""
