"""The explorers of notebooks 08-10: every control swept, pictures change, no warning, no NaN."""

import torch

from helpers.explorers.position import ORDERS, POSITIONS, attend, demo_sentence, position_explorer
from tests.widget_sweep import sweep


def test_position_explorer_sweeps():
    sweep(position_explorer())


def test_position_explorer_equivariance_readout():
    live = position_explorer()
    gaps = {}
    for kind in POSITIONS:
        for order in ORDERS:
            live.set(order=order, positions=kind)
            gaps[kind, order] = live.readouts["max |out(shuffled) - shuffled out|"]
    assert all(gaps["none", o] == 0 for o in ORDERS)
    assert all(gaps[k, "swap 2nd and last"] > 0.05 for k in POSITIONS[1:])
    live.set(order="reversed", positions="none")
    assert live.readouts["both 'the' get the same output"] == "yes"
    live.set(positions=POSITIONS[1])
    assert live.readouts["both 'the' get the same output"] == "no"


def test_attend_rejects_unknown_positions():
    _, x, wq, wk, wv = demo_sentence()
    try:
        attend(x, wq, wk, wv, "absolute")
    except ValueError as error:
        assert "positions must be one of" in str(error)
    else:  # pragma: no cover
        raise AssertionError("no error")
    out, w = attend(x, wq, wk, wv)
    torch.testing.assert_close(w.sum(-1), torch.ones(5, dtype=w.dtype))


def test_scale_explorer_sweeps():
    from helpers.explorers.scale import scale_explorer

    live = scale_explorer()
    sweep(live)
    live.set(context=4096, kv_heads=32, bytes_per_value=2)
    assert live.readouts["KV cache, all layers (GiB)"] == 2.0
    assert 13.5 < live.readouts["n × n part of FLOPs (%)"] < 14.5
    assert 41.5 < live.readouts["attention sublayer of FLOPs (%)"] < 42.5
    live.set(kv_heads=8)
    assert live.readouts["KV cache, all layers (GiB)"] == 0.5


def test_trained_explorer_sweeps():
    from helpers.explorers.trained import trained_explorer

    live = trained_explorer()
    sweep(live)
    live.set(layer=1, head=0, word="BADGE", weights="trained")
    assert live.readouts["model's output"] == "EGDAB" and live.readouts["correct"] == "yes"
    assert live.readouts["weight on the mirror position"] > 0.8
    live.set(weights="untrained")
    assert live.readouts["weight on the mirror position"] < 0.5
