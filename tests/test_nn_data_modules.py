"""nn.CoinFlip and nn.CropMirrorNormalize (INVENTORY D.9), against numpy."""
import numpy as np
import pytest

import oneflow as flow


def test_coin_flip():
    a = flow.nn.CoinFlip(batch_size=4000, random_seed=7, probability=0.3)
    b = flow.nn.CoinFlip(batch_size=4000, random_seed=7, probability=0.3)
    x = a()
    assert x.dtype == flow.int8 and tuple(x.shape) == (4000,)
    assert set(np.unique(x.numpy())) <= {0, 1}
    assert 0.26 < x.numpy().mean() < 0.34
    np.testing.assert_array_equal(x.numpy(), b().numpy())  # same seed, same flips
    assert not np.array_equal(a().numpy(), x.numpy())      # the sequence goes on
    assert flow.nn.CoinFlip(10, probability=0.0)().numpy().sum() == 0
    assert flow.nn.CoinFlip(10, probability=1.0)().numpy().sum() == 10
    with pytest.raises(ValueError, match="probability"):
        flow.nn.CoinFlip(probability=1.5)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_crop_mirror_normalize(layout):
    rs = np.random.RandomState(0)
    img = rs.randint(0, 256, (3, 6, 7, 3)).astype(np.uint8)
    mirror = np.array([1, 0, 1], np.int8)
    m = flow.nn.CropMirrorNormalize(color_space="RGB", output_layout=layout, crop_h=4, crop_w=5,
                                    crop_pos_y=0.5, crop_pos_x=1.0, mean=[10.0, 20.0, 30.0], std=[2.0, 4.0, 8.0])
    out = m(flow.tensor(img), flow.tensor(mirror)).numpy()
    y0, x0 = int((6 - 4) * 0.5), int((7 - 5) * 1.0)
    want = img[:, y0:y0 + 4, x0:x0 + 5, :].astype(np.float32)
    want[mirror == 1] = want[mirror == 1][:, :, ::-1, :]
    want = (want - np.array([10, 20, 30], np.float32)) / np.array([2, 4, 8], np.float32)
    if layout == "NCHW":
        want = want.transpose(0, 3, 1, 2)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-6)
    # no crop, no mirror, float16, one mean for all channels
    half = flow.nn.CropMirrorNormalize(mean=[128.0], std=[64.0], output_dtype=flow.float16)(flow.tensor(img))
    assert half.dtype == flow.float16 and tuple(half.shape) == (3, 3, 6, 7)
    np.testing.assert_allclose(half.float().numpy(), ((img.astype(np.float32) - 128) / 64).transpose(0, 3, 1, 2),
                               atol=1e-3)


def test_crop_mirror_normalize_errors():
    m = flow.nn.CropMirrorNormalize(crop_h=9)
    with pytest.raises(RuntimeError, match="larger than the images"):
        m(flow.zeros(1, 4, 4, 3, dtype=flow.uint8))
    with pytest.raises(RuntimeError, match="3 channels"):
        m(flow.zeros(1, 4, 4, 1, dtype=flow.uint8))
    with pytest.raises(RuntimeError, match="mirror must have shape"):
        flow.nn.CropMirrorNormalize()(flow.zeros(2, 4, 4, 3, dtype=flow.uint8), flow.ones(3, dtype=flow.int8))
    with pytest.raises(ValueError, match="mean needs 1 or 3"):
        flow.nn.CropMirrorNormalize(mean=[1.0, 2.0])
    with pytest.raises(ValueError, match="output_layout"):
        flow.nn.CropMirrorNormalize(output_layout="CHW")
