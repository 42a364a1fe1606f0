"""The types a plugin fills and the domain reads, at the bottom of the import graph.

A probe returns these from its optional methods and the report, fleet and show read them:
``advisor.specs.figures`` (``FigureSpec`` and its parts: what ``figures(evidence, facts)``
returns), ``advisor.specs.headline`` (the figures ``headline(evidence)`` returns, and the helper
that reads the usual one), ``advisor.specs.units`` (sizes, durations and bandwidths as text, for
captions and notes); ``advisor.specs.selection`` (``Selection``: what one emit decided, as
every format's ``render(selection)`` receives it), ``advisor.specs.writing`` (the helpers every
format shares: ``env_items``, the left-out comment), ``advisor.specs.entry`` (``EnvEntry``, what
a format's ``parse`` returns) and ``advisor.specs.names`` (names never emitted).  Everything
here is pure data and text: no I/O, no drawing, and no import above the base layer (models,
knobs).
"""
