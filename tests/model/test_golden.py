"""Every kernel preset's numbers stay bit-identical to the golden file
(tests/golden/presets.json, recorded by tests/model/golden_scenarios.py)."""

import json

import pytest
from golden_scenarios import GOLDEN, key, run, scenarios

EXPECTED = json.loads(GOLDEN.read_text())


def test_the_golden_file_covers_every_scenario():
    assert sorted(EXPECTED) == sorted(key(*s) for s in scenarios())


@pytest.mark.parametrize("scenario", scenarios(), ids=lambda s: key(*s))
def test_preset_metrics_are_bit_identical(scenario):
    got = run(*scenario)
    want = EXPECTED[key(*scenario)]
    assert sorted(got) == sorted(want)
    changed = {k: (want[k], got[k]) for k in want if got[k] != want[k]}
    assert not changed, changed
