"""Krippendorff's alpha at the ordinal and interval levels, kappa from a confusion matrix.

Reference values marked "krippendorff 0.9.0" were computed once with the ``krippendorff``
package (GPL-3.0, so never a dependency of docket, not even for tests): it was installed
into a throwaway virtualenv and ``krippendorff.alpha(reliability_data=..., level_of_measurement=...)``
was run on exactly the data below (NaN where the row has None); the printed values are
pasted here as constants.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from docket.agreement import (
    alpha_from_coincidences,
    alpha_from_confusion,
    cohen_kappa,
    confusion_matrix,
    kappa_from_confusion,
    krippendorff_alpha,
    weighted_kappa,
)
from tests.review.test_agreement import KRIPPENDORFF_DATA

N = None
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units.
# The paper gives nominal 0.743, ordinal 0.815, interval 0.849 by hand.
TEXTBOOK = KRIPPENDORFF_DATA
# Three raters, 30 units on 0..3 with missing ratings (drawn once with a seeded generator).
THREE_RATERS = [
    [0, 3, 0, 1, 1, N, 0, 3, 0, 0, 2, 1, 0, 2, 1, 1, N, 2, N, 2, 1, N, 2, 0, N, 2, 1, 2, N, 2],
    [1, 3, 0, 2, 1, 0, 0, N, 1, 0, 3, 1, 0, 2, N, 2, 2, N, N, N, 2, 1, N, 0, 0, 2, 1, 3, 2, 3],
    [0, 3, 0, 2, 0, 2, 0, N, 0, 0, 3, N, N, 3, 2, 3, 2, 3, 2, 3, 2, 2, N, 1, 1, N, 2, N, 2, 3],
]
# Two raters on unevenly spaced values: interval alpha must use the values, not ranks.
UNEVEN = [[0, 1, 5, 10, 10, 0, 1, 5, 0, 10], [0, 1, 10, 10, 5, 1, 1, 5, 0, 5]]

PACKAGE = {  # krippendorff 0.9.0
    "textbook": {"nominal": 0.743421052631579, "ordinal": 0.8153875037548814,
                 "interval": 0.8491071428571428},
    "three": {"nominal": 0.282782212086659, "ordinal": 0.7198969274837312,
              "interval": 0.7173834477773762},
    "uneven": {"nominal": 0.4933333333333334, "ordinal": 0.8480000000000001,
               "interval": 0.7670967741935484},
}  # fmt: skip
DATA = {"textbook": TEXTBOOK, "three": THREE_RATERS, "uneven": UNEVEN}


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_matches_the_krippendorff_package(name: str, level: str) -> None:
    assert krippendorff_alpha(DATA[name], level) == pytest.approx(PACKAGE[name][level], abs=1e-12)


def test_alpha_textbook_values_to_the_published_digits() -> None:
    assert round(krippendorff_alpha(TEXTBOOK, "nominal"), 3) == 0.743
    assert round(krippendorff_alpha(TEXTBOOK, "ordinal"), 3) == 0.815
    assert round(krippendorff_alpha(TEXTBOOK, "interval"), 3) == 0.849


# Two raters, four units: (0,0), (1,2), (2,2), (1,1). Coincidences o = C + C^T put 2 on
# the diagonal for each agreeing unit and 1 in o[1,2] and o[2,1]; marginals n = (2, 3, 3),
# n = 8. With alpha = 1 - (n - 1) * sum(o d) / sum(n_c n_k d):
# nominal:  observed 2, expected 64 - (4 + 9 + 9) = 42          -> 1 - 7 * 2 / 42 = 2/3
# interval: d = (c - k)^2; observed 2, expected 2 (6*1 + 6*4 + 9*1) = 78 -> 1 - 14/78 = 32/39
# ordinal:  d01 = (1 + 1.5)^2 = 6.25, d12 = (1.5 + 1.5)^2 = 9, d02 = (1 + 3 + 1.5)^2 = 30.25;
#           observed 2 * 9 = 18, expected 2 (6*6.25 + 6*30.25 + 9*9) = 600 -> 1 - 126/600 = 0.79
SMALL = [[0, 1, 2, 1], [0, 2, 2, 1]]


def test_alpha_hand_computed_two_raters() -> None:
    assert krippendorff_alpha(SMALL, "nominal") == pytest.approx(2 / 3)
    assert krippendorff_alpha(SMALL, "interval") == pytest.approx(32 / 39)
    assert krippendorff_alpha(SMALL, "ordinal") == pytest.approx(0.79)


def test_alpha_from_confusion_equals_reliability_data() -> None:
    table = confusion_matrix(*SMALL, categories=[0, 1, 2])
    for level in ("nominal", "ordinal", "interval"):
        assert alpha_from_confusion(table, level) == pytest.approx(krippendorff_alpha(SMALL, level))
    # A category nobody used changes nothing (as the package's value_domain).
    padded = confusion_matrix(*SMALL, categories=[0, 1, 2, 3])
    assert alpha_from_confusion(padded, "ordinal") == pytest.approx(0.79)


def test_interval_alpha_uses_the_values() -> None:
    table = confusion_matrix(*UNEVEN, categories=[0, 1, 5, 10])
    by_value = alpha_from_confusion(table, "interval", [0, 1, 5, 10])
    assert by_value == pytest.approx(PACKAGE["uneven"]["interval"])
    assert alpha_from_confusion(table, "interval") != pytest.approx(by_value)  # 0,1,2,3


def test_alpha_undefined_and_refused() -> None:
    assert math.isnan(krippendorff_alpha([[1, 1, 1], [1, 1, 1]], "ordinal"))
    assert math.isnan(alpha_from_coincidences(np.zeros((3, 3)), "interval"))
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], "ordinal")
    with pytest.raises(ValueError, match="level"):
        alpha_from_coincidences(np.eye(2), "ratio")  # type: ignore[arg-type]


def test_kappa_from_confusion_matches_the_sequence_functions() -> None:
    a, b = [0, 1, 2, 3, 3, 2, 0, 1], [0, 2, 2, 3, 1, 2, 1, 1]
    table = confusion_matrix(a, b, [0, 1, 2, 3])
    assert kappa_from_confusion(table) == pytest.approx(cohen_kappa(a, b))
    for weights in ("linear", "quadratic"):
        expected = weighted_kappa(a, b, [0, 1, 2, 3], weights)
        assert kappa_from_confusion(table, weights) == pytest.approx(expected)  # type: ignore[arg-type]
    # Unweighted by hand: p_o = 5/8; marginals (2,2,2,2)/8 and (1,3,3,1)/8 -> p_e = 1/4.
    assert kappa_from_confusion(table) == pytest.approx((5 / 8 - 1 / 4) / (1 - 1 / 4))


def test_weighted_kappa_refuses_unknown_labels_with_value_error() -> None:
    with pytest.raises(ValueError, match="label 5 is not among"):
        weighted_kappa([0, 1, 5], [0, 1, 2], [0, 1, 2, 3])
    with pytest.raises(ValueError, match="aligned"):
        weighted_kappa([0, 1], [0], [0, 1])


def test_kappa_undefined_cases() -> None:
    assert math.isnan(kappa_from_confusion(np.zeros((4, 4))))
    assert math.isnan(kappa_from_confusion([[5.0, 0.0], [0.0, 0.0]]))  # one label only
    assert math.isnan(cohen_kappa([], []))
