"""TensorBuffer / TensorList and the image and object-detection ops (INVENTORY G), against numpy,
Pillow and the spec's examples; TensorList arguments of job functions."""
import io

import numpy as np
import pytest
import torch
from PIL import Image

import oneflow as flow
import oneflow.typing as tp


def test_tensor_buffer_round_trips():
    x = np.random.RandomState(0).randn(4, 3, 5, 6).astype(np.float32)
    buf = flow.tensor_to_tensor_buffer(flow.tensor(x), instance_dims=2)
    assert buf.dtype is flow.tensor_buffer and tuple(buf.shape) == (4, 3) and tuple(buf.element(1, 2).shape) == (5, 6)
    np.testing.assert_array_equal(buf.element(1, 2).numpy(), x[1, 2])
    back = flow.tensor_buffer_to_tensor(buf, flow.float64, (5, 6))
    assert back.dtype == flow.float64
    np.testing.assert_array_equal(back.numpy(), x)
    gen = flow.gen_tensor_buffer([2], [(2, 3), (1, 4)], [1.5, 2.0])
    a, b = flow.tensor_buffer_to_list_of_tensors(gen, (2, 4), flow.float32, dynamic_out=True)
    np.testing.assert_array_equal(a.numpy(), np.full((2, 3), 1.5))
    np.testing.assert_array_equal(b.numpy(), np.full((1, 4), 2.0))
    with pytest.raises(RuntimeError, match="out_shape"):
        flow.tensor_buffer_to_list_of_tensors(gen, (2, 3), flow.float32)
    with pytest.raises(RuntimeError, match="instance_shape"):
        flow.tensor_buffer_to_tensor(gen, flow.float32, (2, 3))

    @flow.global_function()  # a traced job: the elements are lazy views, the stack is recorded
    def job(x: tp.Numpy.Placeholder((4, 3, 5, 6))) -> tp.Numpy:
        return flow.tensor_buffer_to_tensor(flow.tensor_to_tensor_buffer(x, 2), flow.float32, (5, 6)) * 2

    np.testing.assert_array_equal(job(x), x * 2)


def _png(arr):
    b = io.BytesIO()
    Image.fromarray(arr).save(b, format="PNG")
    return flow.tensor(np.frombuffer(b.getvalue(), np.uint8).copy())


def test_decode_flip_normalize_align():
    rs = np.random.RandomState(1)
    imgs = [rs.randint(0, 256, (5, 7, 3)).astype(np.uint8), rs.randint(0, 256, (6, 4, 3)).astype(np.uint8)]
    buf = flow.TensorBuffer([_png(a) for a in imgs])
    bgr = flow.image_decode(buf)
    np.testing.assert_array_equal(bgr[0].numpy(), imgs[0][:, :, ::-1])
    gray = flow.image_decode(buf, color_space="GRAY")
    assert tuple(gray[1].shape) == (6, 4, 1)
    rgb = flow.image.decode(buf, color_space="RGB")
    flipped = flow.image_flip(rgb, flow.tensor([1, 17], dtype=flow.int8))
    np.testing.assert_array_equal(flipped[0].numpy(), imgs[0][:, ::-1])
    np.testing.assert_array_equal(flipped[1].numpy(), imgs[1][::-1, ::-1])
    norm = flow.image_normalize(rgb, std=[2.0, 4.0, 8.0], mean=[1.0, 2.0, 3.0])
    np.testing.assert_allclose(norm[1].numpy(), (imgs[1] - np.array([1, 2, 3.0])) / [2, 4, 8], rtol=1e-6)
    aligned = flow.image_batch_align(rgb, shape=(16, 16, 3), dtype=flow.float32, alignment=8)
    assert tuple(aligned.shape) == (2, 8, 8, 3)
    np.testing.assert_array_equal(aligned[1, :6, :4].numpy(), imgs[1])
    assert float(aligned[1, 6:].abs().sum()) == 0
    with pytest.raises(RuntimeError, match="not an image"):
        flow.image_decode(flow.TensorBuffer([flow.tensor([1, 2, 3], dtype=flow.uint8)]))
    with pytest.raises(ValueError, match="flip code"):
        flow.image_flip(rgb, 2)


def test_resize_against_torch_bilinear():
    rs = np.random.RandomState(2)
    imgs = [rs.rand(4, 6, 3).astype(np.float32), rs.rand(5, 3, 3).astype(np.float32)]
    buf = flow.TensorBuffer([flow.tensor(a) for a in imgs])
    out, scale, size = flow.image.Resize(buf, target_size=(12, 10))  # (w, h): upsampling
    assert tuple(out.shape) == (2, 10, 12, 3) and size is None
    for i, a in enumerate(imgs):
        want = torch.nn.functional.interpolate(torch.from_numpy(a).permute(2, 0, 1)[None], size=(10, 12),
                                               mode="bilinear", align_corners=False)[0].permute(1, 2, 0)
        np.testing.assert_allclose(out[i].numpy(), want.numpy(), atol=1e-5)
    np.testing.assert_allclose(scale.numpy(), [[12 / 6, 10 / 4], [12 / 3, 10 / 5]], rtol=1e-6)
    kept, kscale, ksize = flow.image_resize(buf, target_size=8, keep_aspect_ratio=True, max_size=10)
    # shorter side -> 8, unless the longer would pass max_size 10
    assert tuple(kept[0].shape) == (7, 10, 3) and tuple(kept[1].shape) == (10, 6, 3)
    np.testing.assert_array_equal(ksize.numpy(), [[10, 7], [6, 10]])
    imgs_, size_, scale_ = flow.image_target_resize(buf, 8, max_size=10)
    np.testing.assert_array_equal(size_.numpy(), ksize.numpy())
    legacy = flow.image_resize(buf, resize_x=5, resize_y=4)
    assert tuple(legacy.shape) == (2, 4, 5, 3)


def test_random_crop_is_seeded_and_inside():
    buf = flow.TensorBuffer([flow.arange(600.0).reshape(20, 30, 1)] * 3)
    a = flow.image_random_crop(buf, seed=3)
    b = flow.image.random_crop(buf, seed=3)
    for x, y in zip(a.elements, b.elements):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
        h, w = x.shape[0], x.shape[1]
        assert 0.08 * 600 * 0.7 <= h * w <= 600
        first = int(x[0, 0, 0])
        r, c = divmod(first, 30)
        np.testing.assert_array_equal(x.numpy()[:, :, 0], np.arange(600.0).reshape(20, 30)[r:r + h, c:c + w])


def test_object_ops_and_the_spec_bbox_example():
    def object_bbox_flip_job(bbox_def: tp.ListListNumpy.Placeholder(shape=(1, 2, 4), dtype=flow.float),
                             image_size_def: tp.ListNumpy.Placeholder(shape=(1, 2), dtype=flow.int32)
                             ) -> tp.ListListNumpy:
        bbox_buffer = flow.tensor_list_to_tensor_buffer(bbox_def)
        flip_bbox = flow.object_bbox_flip(bbox_buffer, image_size_def, 1)
        return flow.tensor_buffer_to_tensor_list(flip_bbox, shape=(2, 4), dtype=flow.float)

    job = flow.global_function()(object_bbox_flip_job)
    bbox = np.array([[[20.0, 40.0, 80.0, 160.0], [30.0, 50.0, 70.0, 100.0]]]).astype(np.single)
    image_size = np.array([[480, 620]]).astype(np.int32)
    out = job([[np.expand_dims(b, 0) for b in bbox]], [image_size])
    np.testing.assert_array_equal(out[0][0], [[399.0, 40.0, 459.0, 160.0], [409.0, 50.0, 449.0, 100.0]])
    boxes = flow.TensorBuffer([flow.tensor([[2.0, 4.0, 6.0, 8.0]])])
    np.testing.assert_array_equal(flow.object_bbox_scale(boxes, flow.tensor([[0.5, 2.0]]))[0].numpy(),
                                  [[1.0, 8.0, 3.0, 16.0]])
    poly = flow.TensorBuffer([flow.tensor([[1.0, 1.0], [5.0, 1.0], [5.0, 4.0], [1.0, 4.0]])])
    np.testing.assert_array_equal(flow.object_segmentation_polygon_flip(poly, [[10, 8]], 17)[0].numpy(),
                                  [[9.0, 7.0], [5.0, 7.0], [5.0, 4.0], [9.0, 4.0]])
    np.testing.assert_array_equal(flow.object_segmentation_polygon_scale(poly, [[2.0, 1.0]])[0].numpy()[1], [10.0, 1.0])
    index = flow.TensorBuffer([flow.tensor([[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]])])
    mask = flow.object_segmentation_polygon_to_mask(poly, index, [[10, 8]])[0].numpy()
    assert mask.shape == (1, 8, 10) and mask.dtype == np.int8
    assert mask[0, 1:5, 1:6].all() and mask.sum() == 20  # the filled rectangle, borders included


def test_tensor_list_job_runs_its_python_each_call():
    @flow.global_function()
    def pipeline(images: tp.ListListNumpy.Placeholder((4, 8, 8, 3), dtype=flow.uint8)) -> tp.ListListNumpy:
        buf = flow.tensor_list_to_tensor_buffer(images)
        buf = flow.image_normalize(flow.image_flip(buf, 1), std=[1, 1, 1], mean=[0, 0, 0])
        return flow.tensor_buffer_to_tensor_list(buf, shape=(8, 8, 3), dtype=flow.float32)

    rs = np.random.RandomState(4)
    imgs = [rs.randint(0, 256, (3, 5, 3)).astype(np.uint8), rs.randint(0, 256, (8, 2, 3)).astype(np.uint8)]
    (out,) = pipeline([imgs])
    assert len(out) == 2
    np.testing.assert_array_equal(out[1], imgs[1][:, ::-1].astype(np.float32))
    with pytest.raises(ValueError, match="more than"):
        pipeline([[np.zeros((9, 8, 3), np.uint8)]])
