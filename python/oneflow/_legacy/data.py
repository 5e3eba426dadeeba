"""``flow.data`` of OneFlow 0.x (and ``flow.image.CropMirrorNormalize``, ``flow.random.CoinFlip``):
the data ops a 0.x script calls inside its job function, over the OFRecord readers and decoders of
``nn/modules/ofrecord.py`` and the modules of ``nn/modules/data.py``.

In 0.x a reader is an op of the job: each call of the job reads the next batch. Here a job that
calls a data op runs its Python on every call ("Jobs that run their Python" in
docs/job_functions.md), and the op's state (the reader's position in its files, a random
generator) belongs to the job function: the k-th data op a call of the job makes is the k-th of
every call, so each call continues where the previous one stopped. Outside a job each call makes
a new op (the first batch of its files, a fresh draw).
"""
import numpy as np


def _stateful(kind, make):
    """The state object of this data op: kept by the job function across its calls (made by
    `make()` on the first one), a new one outside jobs. A job being traced stops here: its data
    ops read files and draw numbers on every call, so it runs its Python instead."""
    from ._job_state import current_job
    job = current_job()
    if job is None:
        return make()
    if job.trace is not None:
        raise RuntimeError(f"flow.data.{kind}: this data op needs the tensor's values of every call "
                           "(the job runs its Python)")
    k = getattr(job, "data_op_count", 0)
    job.data_op_count = k + 1
    states = job.fn.__dict__.setdefault("_data_op_states", {})
    key = (k, kind)
    if key not in states:
        states[key] = make()
    return states[key]


def ofrecord_reader(ofrecord_dir, batch_size=1, data_part_num=1, part_name_prefix="part-",
                    part_name_suffix_length=-1, random_shuffle=False, shuffle_buffer_size=1024,
                    shuffle_after_epoch=False, name=None):
    """The next batch_size serialized records of ofrecord_dir/part-0 .. part-<data_part_num - 1>
    (a TensorBuffer; read again from the start at the end of the files)."""
    from ..nn.modules.ofrecord import OFRecordReader
    reader = _stateful("ofrecord_reader", lambda: OFRecordReader(
        ofrecord_dir, batch_size=batch_size, data_part_num=data_part_num, part_name_prefix=part_name_prefix,
        part_name_suffix_length=part_name_suffix_length, random_shuffle=random_shuffle,
        shuffle_buffer_size=shuffle_buffer_size, shuffle_after_epoch=shuffle_after_epoch))
    return reader()


def ofrecord_loader(ofrecord_dir, batch_size=1, data_part_num=1, part_name_prefix="part-",
                    part_name_suffix_length=-1, shuffle=False, shuffle_buffer_size=1024, name=None):
    """0.x's older name of ofrecord_reader (shuffle = random_shuffle)."""
    return ofrecord_reader(ofrecord_dir, batch_size, data_part_num, part_name_prefix, part_name_suffix_length,
                           shuffle, shuffle_buffer_size, False, name)


def OFRecordRawDecoder(input_blob, blob_name, shape, dtype, dim1_varying_length=False, truncate=False,  # noqa: N802
                       auto_zero_padding=False, name=None):
    """Feature `blob_name` of every record as a (batch, *shape) tensor of dtype."""
    from ..nn.modules.ofrecord import OFRecordRawDecoder as Decoder
    return Decoder(blob_name, shape, dtype, dim1_varying_length=dim1_varying_length, truncate=truncate,
                   auto_zero_padding=auto_zero_padding)(input_blob)


def OFRecordBytesDecoder(input_blob, blob_name, name=None):  # noqa: N802
    """Feature `blob_name`'s bytes of every record (a TensorBuffer of uint8 tensors)."""
    from ..nn.modules.ofrecord import OFRecordBytesDecoder as Decoder
    return Decoder(blob_name)(input_blob)


def OFRecordImageDecoder(input_blob, blob_name, color_space="BGR", name=None):  # noqa: N802
    """The encoded image of feature `blob_name` of every record, decoded (a TensorBuffer of HWC
    uint8 images)."""
    from ..nn.modules.ofrecord import OFRecordImageDecoder as Decoder
    return Decoder(blob_name, color_space)(input_blob)


def OFRecordImageDecoderRandomCrop(input_blob, blob_name, color_space="BGR", num_attempts=10, seed=None,  # noqa: N802
                                   random_area=(0.08, 1.0), random_aspect_ratio=(0.75, 1.333333),
                                   name="OFRecordImageDecoderRandomCrop"):
    """The decoded images, each randomly cropped (an area fraction in random_area, an aspect ratio
    in random_aspect_ratio; the whole image after num_attempts misses). Its generator (seeded by
    `seed`) is the op's state: successive calls of a job draw new crops."""
    from ..nn.modules.ofrecord import OFRecordImageDecoderRandomCrop as Decoder
    decoder = _stateful("OFRecordImageDecoderRandomCrop", lambda: Decoder(
        blob_name, color_space, num_attempts, seed, random_area, random_aspect_ratio))
    return decoder(input_blob)


def image_decoder_random_crop_resize(input_blob, target_width, target_height, num_attempts=None, seed=None,
                                     random_area=None, random_aspect_ratio=None, num_workers=None,
                                     warmup_size=None, max_num_pixels=None, name=None):
    """Encoded images (OFRecordBytesDecoder's TensorBuffer) decoded, randomly cropped and resized
    to (target_height, target_width): a dense (N, H, W, 3) uint8 tensor (0.x's fused GPU decoder;
    num_workers / warmup_size / max_num_pixels tune its threads and buffers)."""
    from .._image import image_decode, image_random_crop, image_resize
    rng = _stateful("ImageDecoderRandomCropResize", lambda: np.random.default_rng(seed))
    crops = image_random_crop(image_decode(input_blob, color_space="BGR"), 10 if num_attempts is None else num_attempts,
                              int(rng.integers(1 << 31)), random_area or [0.08, 1.0],
                              random_aspect_ratio or [0.75, 1.333333])
    return image_resize(crops, resize_x=target_width, resize_y=target_height)


def decode_random(shape, dtype, batch_size=1, initializer=None, tick=None, name=None):
    """A (batch_size, *shape) tensor of dtype filled by `initializer` (default
    flow.random_uniform_initializer(): uniform in [0, 1)), drawn anew at every call: 0.x's
    synthetic data."""
    from .initializers import InitializerConf, random_uniform_initializer
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"data.decode_random: shape must be a list or tuple, got {type(shape).__name__}")
    if batch_size < 1:
        raise ValueError(f"data.decode_random: batch_size must be positive, got {batch_size}")
    init = random_uniform_initializer() if initializer is None else initializer
    if not isinstance(init, InitializerConf):
        raise TypeError("data.decode_random: initializer must come from flow.*_initializer")
    _stateful("decode_random", lambda: None)  # (a job calling it runs its Python: new values every call)
    return init((int(batch_size),) + tuple(int(d) for d in shape), dtype)


def ofrecord_image_classification_reader(ofrecord_dir, image_feature_name, label_feature_name, batch_size=1,
                                         data_part_num=1, part_name_prefix="part-", part_name_suffix_length=-1,
                                         random_shuffle=False, shuffle_buffer_size=1024, shuffle_after_epoch=False,
                                         color_space="BGR", decode_buffer_size_per_thread=32,
                                         num_decode_threads_per_machine=None, name=None):
    """(images, labels) of the next batch: the decoded images (a TensorBuffer of HWC uint8) and
    the int32 labels (batch,) of an image classification data set in OFRecords."""
    from .. import int32
    records = ofrecord_reader(ofrecord_dir, batch_size, data_part_num, part_name_prefix, part_name_suffix_length,
                              random_shuffle, shuffle_buffer_size, shuffle_after_epoch)
    images = OFRecordImageDecoder(records, image_feature_name, color_space)
    labels = OFRecordRawDecoder(records, label_feature_name, shape=(), dtype=int32)
    return images, labels


# ---- flow.image / flow.random ----

def CropMirrorNormalize(input_blob, mirror_blob=None, color_space="BGR", output_layout="NCHW", crop_h=0,  # noqa: N802
                        crop_w=0, crop_pos_y=0.5, crop_pos_x=0.5, mean=(0.0,), std=(1.0,), output_dtype=None,
                        name=None):
    """Images (NHWC uint8 / float, or a TensorBuffer of HWC images) cropped to (crop_h, crop_w)
    at (crop_pos_y, crop_pos_x) of the free space, flipped left-right where mirror_blob is not
    0, normalized as (x - mean) / std, laid out as output_layout."""
    from .. import cat
    from ..nn.modules.data import CropMirrorNormalize as Module
    from .._tensor_buffer import TensorBuffer
    op = Module(color_space, output_layout, crop_h, crop_w, crop_pos_y, crop_pos_x, mean, std, output_dtype)
    if not isinstance(input_blob, TensorBuffer):
        return op(input_blob, mirror_blob)
    n = len(input_blob.elements)
    if mirror_blob is not None and tuple(mirror_blob.shape) != (n,):
        raise RuntimeError(f"CropMirrorNormalize: mirror must have shape ({n},), got {tuple(mirror_blob.shape)}")
    outs = [op(e.unsqueeze(0), None if mirror_blob is None else mirror_blob[i:i + 1])
            for i, e in enumerate(input_blob.elements)]
    shapes = {tuple(o.shape) for o in outs}
    if len(shapes) != 1:
        raise RuntimeError("CropMirrorNormalize: images of different sizes need crop_h and crop_w")
    return cat(outs, 0)


def CoinFlip(batch_size=1, seed=None, probability=0.5, name="CoinFlip"):  # noqa: N802
    """(batch_size,) int8 flags, 1 with `probability`; seeded, the op's generator continues
    across a job's calls."""
    from ..nn.modules.data import CoinFlip as Module
    return _stateful("CoinFlip", lambda: Module(batch_size, seed, probability))()


# flow.data's names (0.x's lower-case aliases name the same functions)
NAMES = {
    "ofrecord_reader": ofrecord_reader, "ofrecord_loader": ofrecord_loader,
    "OFRecordRawDecoder": OFRecordRawDecoder, "ofrecord_raw_decoder": OFRecordRawDecoder,
    "OFRecordBytesDecoder": OFRecordBytesDecoder, "ofrecord_bytes_decoder": OFRecordBytesDecoder,
    "OFRecordImageDecoder": OFRecordImageDecoder, "ofrecord_image_decoder": OFRecordImageDecoder,
    "OFRecordImageDecoderRandomCrop": OFRecordImageDecoderRandomCrop,
    "ofrecord_image_decoder_random_crop": OFRecordImageDecoderRandomCrop,
    "ImageDecoderRandomCropResize": image_decoder_random_crop_resize,
    "image_decoder_random_crop_resize": image_decoder_random_crop_resize,
    "decode_random": decode_random, "ofrecord_image_classification_reader": ofrecord_image_classification_reader,
}
