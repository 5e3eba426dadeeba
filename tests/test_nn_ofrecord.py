"""OFRecordReader and its decoders, COCOReader (INVENTORY D.9), on files written here."""
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import oneflow as flow
from oneflow.nn.modules.ofrecord import write_ofrecord

pytest.importorskip("google.protobuf", reason="protobuf is installed by scripts/setup.sh")


def _png(arr):
    b = io.BytesIO()
    Image.fromarray(arr).save(b, format="PNG")
    return b.getvalue()


@pytest.fixture
def records(tmp_path):
    rs = np.random.RandomState(0)
    imgs = [rs.randint(0, 256, (4 + i, 5, 3)).astype(np.uint8) for i in range(6)]
    recs = [{"encoded": _png(im), "class/label": np.array([i], np.int32),
             "feat": rs.randn(6).astype(np.float32), "raw": b"ab%d" % i} for i, im in enumerate(imgs)]
    write_ofrecord(str(tmp_path / "part-00000"), recs[:4])
    write_ofrecord(str(tmp_path / "part-00001"), recs[4:])
    return tmp_path, recs, imgs


def test_reader_and_decoders(records):
    folder, recs, imgs = records
    reader = flow.nn.OFRecordReader(str(folder), batch_size=4, data_part_num=2, part_name_suffix_length=5)
    batch = reader()
    labels = flow.nn.OFRecordRawDecoder("class/label", shape=(1,), dtype=flow.int32)(batch)
    assert labels.dtype == flow.int32 and labels.numpy().reshape(-1).tolist() == [0, 1, 2, 3]
    feat = flow.nn.OFRecordRawDecoder("feat", shape=(2, 3), dtype=flow.float32)(batch)
    np.testing.assert_array_equal(feat.numpy()[1], recs[1]["feat"].reshape(2, 3))
    padded = flow.nn.OFRecordRawDecoder("feat", shape=(8,), dtype=flow.float64, auto_zero_padding=True)(batch)
    np.testing.assert_array_equal(padded.numpy()[0, 6:], [0, 0])
    cut = flow.nn.OFRecordRawDecoder("feat", shape=(4,), dtype=flow.float32, truncate=True)(batch)
    np.testing.assert_array_equal(cut.numpy()[2], recs[2]["feat"][:4])
    raw = flow.nn.OFRecordBytesDecoder("raw")(batch)
    assert bytes(raw[3].numpy()) == b"ab3"
    decoded = flow.nn.OFRecordImageDecoder("encoded", color_space="RGB")(batch)
    np.testing.assert_array_equal(decoded[2].numpy(), imgs[2])
    crop = flow.nn.OFRecordImageDecoderRandomCrop("encoded", random_seed=1)(batch)
    assert all(c.shape[0] <= im.shape[0] and c.shape[1] <= 5 for c, im in zip(crop.elements, imgs))
    # the next batch crosses into part 1 and wraps around
    nxt = flow.nn.OFRecordRawDecoder("class/label", (1,), flow.int32)(reader()).numpy().reshape(-1).tolist()
    assert nxt == [4, 5, 0, 1]
    with pytest.raises(RuntimeError, match="shape \\(5,\\) needs 5"):
        flow.nn.OFRecordRawDecoder("feat", shape=(5,), dtype=flow.float32)(batch)
    with pytest.raises(RuntimeError, match="no feature 'nope'"):
        flow.nn.OFRecordBytesDecoder("nope")(batch)


def test_reader_shuffles_reproducibly(records):
    folder, _, _ = records

    def labels(seed, buffer):
        r = flow.nn.OFRecordReader(str(folder), batch_size=6, data_part_num=2, part_name_suffix_length=5,
                                   random_shuffle=True, shuffle_buffer_size=buffer, random_seed=seed)
        return flow.nn.OFRecordRawDecoder("class/label", (1,), flow.int32)(r()).numpy().reshape(-1).tolist()

    # a draw from a buffer of 6 records refilled from the stream (which wraps into the next epoch)
    a = labels(3, 6)
    assert a == labels(3, 6) and set(a) <= set(range(6)) and a != list(range(6))
    assert labels(3, 1) == list(range(6))  # a buffer of one keeps the file order
    with pytest.raises(FileNotFoundError, match="part-00002"):
        flow.nn.OFRecordReader(str(folder), data_part_num=3, part_name_suffix_length=5)


def test_coco_reader(tmp_path):
    rs = np.random.RandomState(1)
    (tmp_path / "img").mkdir()
    coco = {"images": [], "annotations": [], "categories": [{"id": 7, "name": "cat"}, {"id": 3, "name": "dog"}]}
    for i in range(3):
        arr = rs.randint(0, 256, (6, 8, 3)).astype(np.uint8)
        (tmp_path / "img" / f"{i}.png").write_bytes(_png(arr))
        coco["images"].append({"id": 10 + i, "file_name": f"{i}.png", "height": 6, "width": 8})
    coco["images"].append({"id": 99, "file_name": "none.png", "height": 6, "width": 8})  # no annotations
    coco["annotations"] += [
        {"id": 1, "image_id": 10, "bbox": [1, 2, 3, 4], "category_id": 7, "iscrowd": 0,
         "segmentation": [[1, 2, 4, 2, 4, 6]]},
        {"id": 2, "image_id": 11, "bbox": [0, 0, 2, 2], "category_id": 3, "iscrowd": 0, "segmentation": []},
        {"id": 3, "image_id": 12, "bbox": [5, 5, 1, 1], "category_id": 3, "iscrowd": 0, "segmentation": []}]
    path = tmp_path / "ann.json"
    path.write_text(json.dumps(coco))
    reader = flow.nn.COCOReader(str(path), str(tmp_path / "img"), batch_size=3, shuffle=False)
    image, image_id, size, bbox, label, segm, segm_index = reader()
    assert image_id.numpy().tolist() == [10, 11, 12]  # image 99 (no annotations) removed
    np.testing.assert_array_equal(size.numpy(), [[6, 8]] * 3)
    np.testing.assert_array_equal(bbox[0].numpy(), [[1, 2, 4, 6]])
    assert label[0].numpy().tolist() == [2] and label[1].numpy().tolist() == [1]  # ids 3 -> 1, 7 -> 2
    np.testing.assert_array_equal(segm[0].numpy(), [[1, 2], [4, 2], [4, 6]])
    np.testing.assert_array_equal(segm_index[0].numpy(), [[0, 0, 0], [0, 1, 0], [0, 2, 0]])
    decoded = flow.image_decode(image, color_space="RGB")
    assert tuple(decoded[1].shape) == (6, 8, 3)


def test_raw_decoder_dim1_varying_length(tmp_path):
    """Records holding 1, 3 and 2 rows of 2 values each, decoded to shape (3, 2): each record's
    rows first, the missing rows zeros; a partial row or too many rows is an error."""
    rows = [np.arange(2 * k, dtype=np.float32) + 10 * k for k in (1, 3, 2)]
    write_ofrecord(str(tmp_path / "part-00000"), [{"seq": r} for r in rows])
    batch = flow.nn.OFRecordReader(str(tmp_path), batch_size=3, part_name_suffix_length=5)()
    out = flow.nn.OFRecordRawDecoder("seq", shape=(3, 2), dtype=flow.float32, dim1_varying_length=True)(batch)
    assert tuple(out.shape) == (3, 3, 2)
    for k, (r, o) in enumerate(zip(rows, out.numpy())):
        want = np.zeros((3, 2), np.float32)
        want.reshape(-1)[: r.size] = r
        np.testing.assert_array_equal(o, want)
    with pytest.raises(RuntimeError, match="needs 4"):  # 3 rows do not fit shape (2, 2)
        flow.nn.OFRecordRawDecoder("seq", shape=(2, 2), dtype=flow.float32, dim1_varying_length=True)(batch)
    with pytest.raises(RuntimeError, match="not whole rows of 4"):
        flow.nn.OFRecordRawDecoder("seq", shape=(3, 4), dtype=flow.float32, dim1_varying_length=True)(batch)
    with pytest.raises(RuntimeError, match="needs 6"):  # without the flag, the lengths must match
        flow.nn.OFRecordRawDecoder("seq", shape=(3, 2), dtype=flow.float32)(batch)


@pytest.mark.skipif(not flow.distributed.is_gloo_available(), reason="built without Gloo")
@pytest.mark.parametrize("nproc", [1, 2])
def test_global_reader(tmp_path, nproc):
    """placement / sbp: split(0) shares the part files and the batch among the ranks, broadcast
    gives every rank every record; the decoded tensors are global (tests/ofrecord_global_worker.py
    checks each rank's component and the gathered whole)."""
    from test_distributed import free_port

    for p in range(4):
        write_ofrecord(str(tmp_path / f"part-{p}"), [{"label": np.array([10 * p + r], np.int64)} for r in range(3)])
    # a COCO set of 4 annotated 6 x 8 images, ids 20 .. 23
    (tmp_path / "coco").mkdir()
    coco = {"images": [], "annotations": [], "categories": [{"id": 1, "name": "a"}]}
    for i in range(4):
        (tmp_path / "coco" / f"{i}.png").write_bytes(_png(np.full((6, 8, 3), i, np.uint8)))
        coco["images"].append({"id": 20 + i, "file_name": f"{i}.png", "height": 6, "width": 8})
        coco["annotations"].append({"id": i, "image_id": 20 + i, "bbox": [0, 0, 1, 1], "category_id": 1, "iscrowd": 0})
    (tmp_path / "coco" / "ann.json").write_text(json.dumps(coco))
    worker = os.path.join(os.path.dirname(__file__), "ofrecord_global_worker.py")
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", str(nproc), "--master_port",
           str(free_port()), worker, str(tmp_path)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(nproc):
        assert f"rank {rank}: all ok" in r.stdout, r.stdout + r.stderr

