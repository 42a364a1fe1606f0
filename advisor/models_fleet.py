"""The fleet's record in a class profile (``Profile.fleet``): the class and, per headline
figure, the outlier band ``advisor fleet report`` used for that class.

Written by ``advisor fleet report`` into ``DIR/classes/<class>.toml`` (``advisor.fleet.report``)
from the same ``advisor.fleet.outliers.robust_band`` that flags the outlier nodes, so a class
profile alone is enough for ``advisor check`` and for a ReFrame test.  In TOML::

    [fleet]
    class_id = "x86_64_v4-2c-24g-55c3d9d3"
    nodes = 4
    hostlist = "node[1-4]"
    k = 6.0

    [fleet.headlines."host-buffer:memcpy_bandwidth_largest_bytes_per_s"]
    median = 9.1e9      # of the class's nodes, in the figure's unit
    mad = 9.1e7         # raw median absolute deviation, held >= 1 % of the median
    k = 6.0
    low = 8.55e9        # median - k * mad; absent: fewer than 3 nodes had the figure
    high = 9.65e9       # median + k * mad
    nodes = 4           # nodes of the class that had the figure
    unit = "bytes/s"

Kept apart from ``advisor.models`` (which stays under 400 lines); the base configuration is the
same (frozen, unknown keys rejected).
"""

from __future__ import annotations

import math
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["HeadlineBand", "FleetClass"]


class HeadlineBand(BaseModel):
    """One headline figure of a class: its median over the class's nodes and the robust band
    ``[low, high] = median ∓ k·MAD`` (``advisor.fleet.outliers.robust_band``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    median: float = Field(description="median over the class's nodes, in the figure's unit")
    mad: Optional[float] = Field(None, ge=0, description="median absolute deviation (raw, "
                                 "held at least the MAD floor of the median); None: fewer "
                                 "than 3 nodes")
    k: float = Field(ge=0, description="MAD multiple of the band")
    low: Optional[float] = Field(None, description="median - k·MAD; None: no band (< 3 nodes)")
    high: Optional[float] = Field(None, description="median + k·MAD; None: no band (< 3 nodes)")
    nodes: int = Field(ge=0, description="nodes of the class that had the figure")
    unit: str = Field("", max_length=40, description="the figure's unit, from its name's end "
                      "(advisor.specs.headline.headline_unit): bytes/s, bytes, s or ''")

    @field_validator("median", "mad", "low", "high")
    @classmethod
    def _finite(cls, v: Optional[float]) -> Optional[float]:
        if v is not None and not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v


class FleetClass(BaseModel):
    """What ``advisor fleet report`` adds to a class profile: the class, its nodes, and the band
    of each headline figure (key ``probe:figure``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    class_id: str = Field(max_length=200, description="Facts.class_fingerprint() of the class")
    nodes: int = Field(ge=0, description="nodes in the class")
    hostlist: str = Field("", description="the class's nodes as a Slurm hostlist")
    k: float = Field(ge=0, description="MAD multiple of the report's robust rule")
    mad_floor: Optional[float] = Field(None, gt=0, lt=1, description="least MAD of the robust "
                                       "rule, a fraction of the median ([fleet] mad_floor); "
                                       "None: not recorded, the default "
                                       "(advisor.fleet.outliers.MAD_FLOOR_REL)")
    headlines: dict[str, HeadlineBand] = Field(default_factory=dict,
                                               description="'probe:figure' -> its band")
