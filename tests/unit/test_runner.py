"""Runner details that the fault tests do not reach: evidence thinning."""

from advisor.models import Evidence, Point, Series, Stats
from advisor.measure.thinning import MAX_SAMPLES_PER_POINT, thin_evidence


def test_thinning_keeps_time_order_stats_and_warmup():
    samples = [float(i) for i in range(1000)]
    st = Stats(n=1000, median=499.5, mean=499.5, p5=50, p95=950, min=0, max=999)
    ev = Evidence(id="e", series=[Series(name="s", unit="s", points=[
        Point(x=1.0, samples=samples, warmup=[5000.0] * 3, stats=st),
        Point(x=2.0, samples=[1.0, 2.0])])])
    thin = thin_evidence(ev)
    big, small = thin.series[0].points
    assert len(big.samples) <= MAX_SAMPLES_PER_POINT
    assert big.samples[0] == 0.0 and big.samples == sorted(big.samples)  # every k-th, in order
    assert big.stats == st and big.warmup == [5000.0] * 3
    assert small.samples == [1.0, 2.0]
    assert thin_evidence(thin) is thin  # nothing left to cut: returned as is
