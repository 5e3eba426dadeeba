"""One process of the global OFRecordReader / COCOReader test (tests/test_nn_ofrecord.py starts it
through the launcher): `ofrecord_global_worker.py DIR`, DIR holding part-0 .. part-3 of three
records each, record r of part p labelled 10 p + r, and coco/ (four images, ids 20 .. 23)."""
import os
import sys

import numpy as np

import oneflow as flow

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])


def labels_of(parts, count):
    """The first `count` labels read from `parts` in order, wrapping around."""
    stream = [10 * p + r for p in parts for r in range(3)]
    return [stream[i % len(stream)] for i in range(count)]


def main(folder):
    P = flow.placement("cpu", ranks=list(range(WORLD)))
    S0, B = flow.sbp.split(0), flow.sbp.broadcast
    dec = flow.nn.OFRecordRawDecoder("label", shape=(1,), dtype=flow.int64)
    # split(0): rank k reads its balanced range of the 4 part files and 4 / WORLD records a batch
    reader = flow.nn.OFRecordReader(folder, batch_size=4, data_part_num=4, placement=P, sbp=S0)
    mine = list(range(RANK * 4 // WORLD, (RANK + 1) * 4 // WORLD))
    for step in range(2):
        y = dec(reader())
        assert y.is_global and y.sbp == (S0,) and tuple(y.shape) == (4, 1), (y.sbp, y.shape)
        want = labels_of(mine, 4 // WORLD * (step + 1))[step * 4 // WORLD:]
        assert y.to_local().numpy().reshape(-1).tolist() == want, (y.to_local(), want)
        whole = y.to_global(sbp=B).to_local().numpy().reshape(-1).tolist()
        expect = sum((labels_of(list(range(k * 4 // WORLD, (k + 1) * 4 // WORLD)), 4 // WORLD * (step + 1))
                      [step * 4 // WORLD:] for k in range(WORLD)), [])
        assert whole == expect, (whole, expect)
    # broadcast: every rank reads every record, the tensor is broadcast
    y = dec(flow.nn.OFRecordReader(folder, batch_size=5, data_part_num=4, placement=P, sbp=B)())
    assert y.sbp == (B,) and y.to_local().numpy().reshape(-1).tolist() == labels_of([0, 1, 2, 3], 5)
    # bytes and images keep the layout on their buffers
    raw = flow.nn.OFRecordBytesDecoder("label")(flow.nn.OFRecordReader(folder, batch_size=4, data_part_num=4,
                                                                          placement=P, sbp=S0)())
    assert raw.placement == P and raw.sbp == S0 and len(raw) == 4 // WORLD
    # COCOReader: split(0) with stride_partition gives rank k the images k, k + n, ...
    coco = os.path.join(folder, "coco")
    image, image_id, size, *_ = flow.nn.COCOReader(os.path.join(coco, "ann.json"), coco, batch_size=4, shuffle=False,
                                                   placement=P, sbp=S0)()
    ids = [20 + i for i in range(4)]
    assert image_id.sbp == (S0,) and image_id.to_local().numpy().tolist() == ids[RANK::WORLD][:4 // WORLD]
    assert image_id.to_global(sbp=B).to_local().numpy().tolist() == sum((ids[k::WORLD][:4 // WORLD]
                                                                         for k in range(WORLD)), [])
    assert size.sbp == (S0,) and image.placement == P and len(image) == 4 // WORLD
    bad = [dict(batch_size=4, sbp=flow.sbp.split(1)), dict(batch_size=4, sbp=None)]
    if WORLD > 1:
        bad.append(dict(batch_size=3, sbp=S0))  # not divisible by the ranks
    for kw in bad:
        try:
            flow.nn.OFRecordReader(folder, data_part_num=4, placement=P, **kw)
        except ValueError:
            pass
        else:
            raise AssertionError(f"no ValueError for {kw}")


if __name__ == "__main__":
    flow.env.init()
    main(sys.argv[1])
    print(f"rank {RANK}: all ok", flush=True)
