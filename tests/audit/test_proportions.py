"""The audit statistics against cases computed by hand."""

from __future__ import annotations

import math

import pytest

from docket.audit.estimates import Sample, final_label_estimates
from docket.audit.proportions import (
    Stratum,
    allocate,
    exact_interval,
    minimum_per_stratum,
    neyman_weights,
    plan_size,
    proportion_interval,
    stratified_half_width,
    stratified_proportion,
    wilson_interval,
    z_value,
)

Z = 1.959963984540054


def test_wilson_interval_of_8_in_10() -> None:
    # centre (0.8 + z^2/20) / (1 + z^2/10), half z sqrt(0.016 + z^2/400) / (1 + z^2/10)
    low, high = wilson_interval(8, 10)
    denominator = 1 + Z * Z / 10
    centre = (0.8 + Z * Z / 20) / denominator
    half = Z * math.sqrt(0.8 * 0.2 / 10 + Z * Z / 400) / denominator
    assert (low, high) == pytest.approx((centre - half, centre + half))
    assert (low, high) == pytest.approx((0.4902, 0.9433), abs=1e-4)


def test_exact_interval_matches_the_closed_forms_at_the_edges() -> None:
    # k = 0: the upper end solves (1 - p)^n = alpha/2; k = n: the lower end p^n = alpha/2.
    assert exact_interval(0, 10) == pytest.approx((0.0, 1 - 0.025 ** (1 / 10)))
    assert exact_interval(10, 10) == pytest.approx((0.025 ** (1 / 10), 1.0))
    assert exact_interval(8, 10) == pytest.approx((0.4439, 0.9748), abs=1e-4)


def test_auto_interval_is_exact_below_30_and_wilson_from_30() -> None:
    assert proportion_interval(20, 29).method == "exact"
    assert proportion_interval(20, 30).method == "wilson"
    empty = proportion_interval(0, 0)
    assert math.isnan(empty.estimate) and (empty.low, empty.high) == (0.0, 1.0)


def test_z_value_and_bad_counts() -> None:
    assert z_value(0.95) == pytest.approx(Z)
    assert z_value(0.90) == pytest.approx(1.6448536)
    with pytest.raises(ValueError):
        z_value(1.0)
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_stratified_estimate_and_variance_by_hand() -> None:
    strata = [Stratum("a", 100, 10, 9), Stratum("b", 300, 30, 24)]
    result = stratified_proportion(strata)
    assert result.estimate == pytest.approx(0.25 * 0.9 + 0.75 * 0.8)
    pa = (9 + Z * Z / 2) / (10 + Z * Z)  # Agresti-Coull-adjusted proportions
    pb = (24 + Z * Z / 2) / (30 + Z * Z)
    variance = 0.25**2 * 0.9 * pa * (1 - pa) / 10 + 0.75**2 * 0.9 * pb * (1 - pb) / 30
    half = Z * math.sqrt(variance)
    assert (result.low, result.high) == pytest.approx((0.825 - half, 0.825 + half))
    assert result.n == 40


def test_a_census_stratum_adds_no_variance_and_an_unaudited_one_widens() -> None:
    whole = stratified_proportion([Stratum("a", 10, 10, 7)])
    assert (whole.estimate, whole.low, whole.high) == pytest.approx((0.7, 0.7, 0.7))
    partial = stratified_proportion([Stratum("a", 50, 50, 50), Stratum("b", 50, 0, 0)])
    assert math.isnan(partial.estimate)
    assert (partial.low, partial.high) == pytest.approx((0.5, 1.0))


def test_allocation_proportional_with_minimums_caps_and_neyman() -> None:
    assert allocate({"a": 100, "b": 300}, 40) == {"a": 10, "b": 30}
    assert allocate({"a": 100, "b": 300}, 40, minimum={"a": 15}) == {"a": 15, "b": 25}
    # a holds 5 pairs: shares 0.66 and 39.34 round by largest remainder to 1 and 39.
    assert allocate({"a": 5, "b": 300}, 40) == {"a": 1, "b": 39}
    assert allocate({"a": 5, "b": 30}, 35) == {"a": 5, "b": 30}
    weights = neyman_weights({"a": 100, "b": 100}, {"a": 0.5, "b": 0.1})
    assert weights == pytest.approx({"a": 50.0, "b": 30.0})
    assert allocate({"a": 100, "b": 100}, 40, weights) == {"a": 25, "b": 15}
    with pytest.raises(ValueError):
        allocate({"a": 5}, 6)
    with pytest.raises(ValueError):
        allocate({"a": 50}, 6, minimum={"a": 10})


def test_every_stratum_gets_one_pair_when_the_audit_covers_them() -> None:
    sizes = {"a": 1000, "b": 2}
    assert minimum_per_stratum(sizes, 10) == {"a": 1, "b": 1}
    assert minimum_per_stratum(sizes, 1) == {}
    assert allocate(sizes, 10, minimum=minimum_per_stratum(sizes, 10)) == {"a": 9, "b": 1}


def test_plan_size_of_one_stratum_matches_the_closed_form() -> None:
    # n = z^2 p q / (W^2 + z^2 p q / N) = 239.96 for p = 0.2, W = 0.05, N = 10,000.
    size, split = plan_size({"all": 10_000}, {"all": 0.2}, 0.05)
    assert size == 240 and split == {"all": 240}
    assert stratified_half_width({"all": 10_000}, {"all": 240}, {"all": 0.2}) <= 0.05
    assert stratified_half_width({"all": 10_000}, {"all": 239}, {"all": 0.2}) > 0.05


def test_plan_size_keeps_what_is_drawn_and_never_exceeds_the_population() -> None:
    size, split = plan_size({"a": 50, "b": 50}, {"a": 0.5, "b": 0.5}, 0.0001)
    assert size == 100 and split == {"a": 50, "b": 50}
    size, split = plan_size({"a": 500, "b": 500}, {"a": 0.1, "b": 0.1}, 0.2, minimum={"a": 40})
    assert split["a"] >= 40 and size == sum(split.values())


def test_final_label_estimates_by_hand() -> None:
    # Census: 3 answered escalations (1, 0, 1). One automatic stratum of 10 pairs with two
    # answered audit pairs (human, automatic): (1, 1) and (0, 1).
    result = final_label_estimates([1, 0, 1], [Sample(10, [(1, 1), (0, 1)])])
    # Relevant: 2 census + 1 audited + 8 * 1/2 hits over 2 + 10 * 1/2 truly relevant.
    assert result.recall_relevant.estimate == pytest.approx(7 / 7)
    # Irrelevant: 1 census + 1 audited + 8 * 0 hits over 1 + 10 * 1/2 truly irrelevant.
    assert result.recall_irrelevant.estimate == pytest.approx(2 / 6)
    assert result.balanced_accuracy.estimate == pytest.approx((1 + 1 / 3) / 2)
    assert result.relevant_share.estimate == pytest.approx(7 / 13)
    # Residuals of recall(0): (1[y=0,a=0] - 1/3 * 1[y=0]) / 6 = 0 and -1/18; s^2 = 1/648.
    variance = 10**2 * (1 - 2 / 10) * (1 / 648) / 2
    half = Z * math.sqrt(variance)
    assert result.recall_irrelevant.low == pytest.approx(max(0.0, 1 / 3 - half))
    assert result.recall_irrelevant.high == pytest.approx(1 / 3 + half)
    assert result.recall_relevant.n == 5
