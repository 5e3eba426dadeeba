"""OneFlow's record readers (spec 002, INVENTORY D.9): OFRecordReader and its decoders, COCOReader.

An OFRecord file ("part-0", "part-1", ...) is a sequence of records, each an 8-byte
little-endian length and a serialized ``OFRecord`` protobuf message (a map from feature name to
a bytes / float / double / int32 / int64 list). Messages are parsed with the protobuf library
(the message types are built from their descriptor here; no generated code). A reader's
forward() returns one batch as a TensorBuffer of the serialized records (uint8 elements); the
decoders turn a feature of every record into a dense tensor (OFRecordRawDecoder) or a
TensorBuffer (bytes, decoded images).

Note [Readers in a graph]: OneFlow's scripts read their data inside nn.Graph's build() (the
official BERT pre-training: `self.data_loader()` then the model). While a graph traces, a
reader's forward() is a Python step of the program that reads the next batch on each run
(_GraphRecords stands for its records) and OFRecordRawDecoder a step after it that decodes
them, with the (batch, *shape) output the trace needs; the TensorBuffer decoders are eager only.
"""
import json
import os
import struct

import numpy as np

from ... import _oneflow_internal as _C
from .module import Module

_CLASSES = {}


def _record_class():
    """The OFRecord message class (and the module-level pool holding its descriptor)."""
    if "OFRecord" in _CLASSES:
        return _CLASSES["OFRecord"]
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fp = descriptor_pb2.FileDescriptorProto(name="oneflow_ofrecord.proto", package="oneflow", syntax="proto2")
    for name, ftype, packed in (("BytesList", F.TYPE_BYTES, False), ("FloatList", F.TYPE_FLOAT, True),
                                ("DoubleList", F.TYPE_DOUBLE, True), ("Int32List", F.TYPE_INT32, True),
                                ("Int64List", F.TYPE_INT64, True)):
        m = fp.message_type.add(name=name)
        f = m.field.add(name="value", number=1, type=ftype, label=F.LABEL_REPEATED)
        if packed:
            f.options.packed = True
    feat = fp.message_type.add(name="Feature")
    feat.oneof_decl.add(name="kind")
    for i, (fname, tname) in enumerate((("bytes_list", "BytesList"), ("float_list", "FloatList"),
                                        ("double_list", "DoubleList"), ("int32_list", "Int32List"),
                                        ("int64_list", "Int64List")), start=1):
        feat.field.add(name=fname, number=i, type=F.TYPE_MESSAGE, type_name=".oneflow." + tname,
                       label=F.LABEL_OPTIONAL, oneof_index=0)
    rec = fp.message_type.add(name="OFRecord")
    entry = rec.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, type_name=".oneflow.Feature", label=F.LABEL_OPTIONAL)
    rec.field.add(name="feature", number=1, type=F.TYPE_MESSAGE, type_name=".oneflow.OFRecord.FeatureEntry",
                  label=F.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fp)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("oneflow.OFRecord"))
    _CLASSES["OFRecord"], _CLASSES["pool"] = cls, pool
    return cls


def write_ofrecord(path, records):
    """Writes records ({feature name: bytes | list of bytes | numpy array}) to an OFRecord file
    (the format the readers read; arrays of float32 / float64 / int32 / int64 kind)."""
    cls = _record_class()
    with open(path, "wb") as f:
        for rec in records:
            msg = cls()
            for k, v in rec.items():
                feat = msg.feature[k]
                if isinstance(v, (bytes, bytearray)):
                    feat.bytes_list.value.append(bytes(v))
                elif isinstance(v, list) and v and isinstance(v[0], (bytes, bytearray)):
                    feat.bytes_list.value.extend(bytes(b) for b in v)
                else:
                    a = np.asarray(v).reshape(-1)
                    kind = {np.dtype(np.float32): "float_list", np.dtype(np.float64): "double_list",
                            np.dtype(np.int32): "int32_list", np.dtype(np.int64): "int64_list"}.get(a.dtype)
                    if kind is None:
                        raise TypeError(f"write_ofrecord: feature '{k}' has unsupported dtype {a.dtype}")
                    getattr(feat, kind).value.extend(a.tolist())
            data = msg.SerializeToString()
            f.write(struct.pack("<q", len(data)))
            f.write(data)


def _read_records(path):
    with open(path, "rb") as f:
        while True:
            head = f.read(8)
            if not head:
                return
            if len(head) != 8:
                raise RuntimeError(f"OFRecordReader: {path} ends inside a record header")
            (n,) = struct.unpack("<q", head)
            data = f.read(n)
            if len(data) != n:
                raise RuntimeError(f"OFRecordReader: {path} ends inside a record")
            yield data


def _buffer(tensors):
    from ..._tensor_buffer import TensorBuffer
    return TensorBuffer(tensors)


class OFRecordReader(Module):
    """forward() -> the next batch_size records (a TensorBuffer of serialized records), reading
    ofrecord_dir/<part_name_prefix><i> for i < data_part_num (the index zero-padded to
    part_name_suffix_length digits when > 0) over and over; random_shuffle draws from a buffer
    of shuffle_buffer_size records (seeded by random_seed >= 0). With placement and sbp the
    batches are global: split(0) gives each rank of the (1-d) placement a balanced range of the
    part files and batch_size / n records, broadcast has every rank read all of them; the
    decoders then give global tensors (their local rows as this rank's component)."""

    def __init__(self, ofrecord_dir, batch_size=1, data_part_num=1, part_name_prefix="part-",
                 part_name_suffix_length=-1, random_shuffle=False, shuffle_buffer_size=1024,
                 shuffle_after_epoch=False, random_seed=-1, device=None, placement=None, sbp=None, name=None):
        super().__init__()
        if batch_size < 1 or data_part_num < 1 or shuffle_buffer_size < 1:
            raise ValueError("OFRecordReader: batch_size, data_part_num and shuffle_buffer_size must be positive")
        self.placement, self.sbp = _global_layout(placement, sbp, batch_size, data_part_num, "OFRecordReader")
        parts = range(data_part_num)
        if self.placement is not None and self.sbp == _split0():
            # Data parallel: rank k of the placement's n reads its balanced range of the part
            # files and batch_size / n records per batch (its rows of the global batch).
            n, k = len(self.placement._ranks), self.placement._ranks.index(_rank())
            parts = range(k * data_part_num // n, (k + 1) * data_part_num // n)
            batch_size //= n
        self.files = []
        for i in parts:
            suffix = str(i).zfill(part_name_suffix_length) if part_name_suffix_length > 0 else str(i)
            path = os.path.join(ofrecord_dir, part_name_prefix + suffix)
            if not os.path.isfile(path):
                raise FileNotFoundError(f"OFRecordReader: no record file {path}")
            self.files.append(path)
        self.batch_size, self.random_shuffle = batch_size, random_shuffle
        self.shuffle_buffer_size, self.shuffle_after_epoch = shuffle_buffer_size, shuffle_after_epoch
        self._rng = np.random.RandomState(random_seed if random_seed >= 0 else None)
        self._stream = self._records()
        self._pool = []

    def _records(self):
        while True:
            order = list(range(len(self.files)))
            if self.shuffle_after_epoch:
                self._rng.shuffle(order)
            got = False
            for i in order:
                for r in _read_records(self.files[i]):
                    got = True
                    yield r
            if not got:
                raise RuntimeError("OFRecordReader: the record files are empty")

    def _next(self):
        if not self.random_shuffle:
            return next(self._stream)
        while len(self._pool) < self.shuffle_buffer_size:
            self._pool.append(next(self._stream))
        k = self._rng.randint(len(self._pool))
        self._pool[k], self._pool[-1] = self._pool[-1], self._pool[k]
        return self._pool.pop()

    def forward(self):
        trace = _graph_trace()
        if trace is not None:  # (Note [Readers in a graph])
            return _GraphRecords(self, trace.record_call(self._read_in_graph, (), {}, meta_fn=_meta_token))
        from ... import tensor, uint8
        out = _buffer([tensor(np.frombuffer(self._next(), np.uint8).copy(), dtype=uint8)
                       for _ in range(self.batch_size)])
        out.placement, out.sbp = self.placement, self.sbp  # (None, None): local records
        return out

    def _read_in_graph(self):
        """The graph's step: the next batch kept for the decoders' steps; an empty token tensor
        orders them after it."""
        self._graph_records = self.forward()
        return _C.empty(0)


def _graph_trace():
    """The nn.Graph trace in progress, or None (eager)."""
    from ... import _lazy_state
    trace = _lazy_state.current()
    return trace if hasattr(trace, "record_call") else None


def _meta_token():
    return _C.empty(0, device="meta")


class _GraphRecords:
    """An OFRecordReader's records while nn.Graph traces: the reader and the token of its step."""

    def __init__(self, reader, token):
        self.reader, self.token = reader, token
        self.placement, self.sbp = reader.placement, reader.sbp


def _rank():
    from ... import env
    return env.get_rank()


def _split0():
    from ... import sbp
    return sbp.split(0)


def _global_layout(placement, sbp, batch_size, data_part_num, what):
    """(placement, sbp) of a global reader's batches, checked: a 1-d placement holding this rank,
    sbp split(0) (each rank reads its share of the data and of the batch) or broadcast (every
    rank reads the same); (None, None) for a local reader. data_part_num: the record reader's
    part files (None: COCOReader)."""
    if placement is None and sbp is None:
        return None, None
    from ... import placement as placement_type
    from ... import sbp as sbp_module
    if placement is None or sbp is None:
        raise ValueError(f"{what}: placement and sbp go together (a global reader needs both)")
    if not isinstance(placement, placement_type):
        raise TypeError(f"{what}: placement must be a oneflow.placement, got {type(placement).__name__}")
    if isinstance(sbp, (list, tuple)):
        if len(sbp) != 1:
            raise NotImplementedError(f"{what}: one sbp (a 1-d placement) is supported, got " + str(sbp))
        sbp = sbp[0]
    if len(placement.hierarchy) != 1:
        raise NotImplementedError(f"{what}: a 1-d placement is supported, got hierarchy "
                                  f"{tuple(placement.hierarchy)}")
    if sbp != sbp_module.split(0) and sbp != sbp_module.broadcast:
        raise ValueError(f"{what}: sbp must be split(0) or broadcast, got {sbp}")
    if _rank() not in placement._ranks:
        raise RuntimeError(f"{what}: rank {_rank()} is not in the placement's ranks {list(placement._ranks)}")
    n = len(placement._ranks)
    if sbp == sbp_module.split(0):
        if batch_size % n:
            raise ValueError(f"{what}: batch_size {batch_size} is not divisible by the placement's {n} ranks")
        if data_part_num is not None and data_part_num < n:
            raise ValueError(f"{what}: split(0) over {n} ranks needs at least {n} part files, "
                             f"got data_part_num={data_part_num}")
    return placement, sbp


def _globalized(local, records):
    """A decoder's output: local, or for a global reader's records this rank's component of the
    global tensor (a TensorBuffer keeps the layout as attributes for the next decoder)."""
    placement = getattr(records, "placement", None)
    if placement is None:
        return local
    if isinstance(local, _TensorBuffer()):
        local.placement, local.sbp = placement, records.sbp
        return local
    return local.to_global(placement=placement, sbp=records.sbp)


def _TensorBuffer():  # noqa: N802 - the class, imported late
    from ..._tensor_buffer import TensorBuffer
    return TensorBuffer


def _features(records, blob_name, what):
    from ..._tensor_buffer import TensorBuffer
    if isinstance(records, _GraphRecords):
        raise NotImplementedError(f"{what}: in nn.Graph's build() the records decode with OFRecordRawDecoder "
                                  "(Note [Readers in a graph]); this decoder's TensorBuffer runs eagerly")
    if not isinstance(records, TensorBuffer):
        raise TypeError(f"{what}: expected the records of an OFRecordReader, got {type(records).__name__}")
    cls = _record_class()
    out = []
    for e in records.elements:
        msg = cls.FromString(e.numpy().tobytes())
        if blob_name not in msg.feature:
            raise RuntimeError(f"{what}: a record has no feature '{blob_name}' (it has {sorted(msg.feature)})")
        out.append(msg.feature[blob_name])
    return out


class OFRecordRawDecoder(Module):
    """forward(records) -> a (batch, *shape) tensor of dtype from feature `blob_name`: each
    record's values must number prod(shape) (truncate: more are cut; auto_zero_padding: fewer
    are padded with zeros). dim1_varying_length: a record's first dimension (the one after the
    batch's) may be shorter than shape[0]: it holds whole rows of prod(shape[1:]) values, at most
    shape[0] of them, the missing rows zero-filled."""

    def __init__(self, blob_name, shape, dtype, dim1_varying_length=False, truncate=False, auto_zero_padding=False,
                 name=None):
        super().__init__()
        self.blob_name, self.shape, self.dtype = blob_name, tuple(shape), dtype
        self.truncate, self.auto_zero_padding = truncate, auto_zero_padding
        self.dim1_varying_length = dim1_varying_length
        if dim1_varying_length and not self.shape:
            raise ValueError("OFRecordRawDecoder: dim1_varying_length needs a shape with a first dimension")

    def forward(self, records):
        if isinstance(records, _GraphRecords):  # (Note [Readers in a graph])
            reader = records.reader

            def meta(token):
                rows = _C.empty((reader.batch_size,) + self.shape, dtype=self.dtype, device="meta")
                return _globalized(rows, records)
            return _graph_trace().record_call(lambda token: self.forward(reader._graph_records), (records.token,), {},
                                              meta_fn=meta)
        from ... import tensor
        n = int(np.prod(self.shape))
        rows = []
        for feat in _features(records, self.blob_name, "OFRecordRawDecoder"):
            kind = feat.WhichOneof("kind")
            if kind == "bytes_list":
                vals = np.frombuffer(b"".join(feat.bytes_list.value), np.uint8)
            else:
                vals = np.asarray(getattr(feat, kind).value if kind else [])
            if vals.size > n and self.truncate:
                vals = vals[:n]
            if self.dim1_varying_length and vals.size < n:
                row = n // self.shape[0] if self.shape[0] else 0
                if row and vals.size % row:
                    raise RuntimeError(f"OFRecordRawDecoder: feature '{self.blob_name}' has {vals.size} values, "
                                       f"not whole rows of {row} (shape {self.shape}, dim1_varying_length)")
                vals = np.concatenate([vals, np.zeros(n - vals.size, vals.dtype)])
            if vals.size < n and self.auto_zero_padding:
                vals = np.concatenate([vals, np.zeros(n - vals.size, vals.dtype)])
            if vals.size != n:
                raise RuntimeError(f"OFRecordRawDecoder: feature '{self.blob_name}' has {vals.size} values, "
                                   f"shape {self.shape} needs {n}")
            rows.append(vals)
        return _globalized(tensor(np.stack(rows).reshape((len(rows),) + self.shape)).to(self.dtype), records)


class OFRecordBytesDecoder(Module):
    """forward(records) -> a TensorBuffer of each record's bytes (uint8)."""

    def __init__(self, blob_name, name=None):
        super().__init__()
        self.blob_name = blob_name

    def forward(self, records):
        from ... import tensor, uint8
        return _globalized(_buffer([tensor(np.frombuffer(b"".join(f.bytes_list.value), np.uint8).copy(), dtype=uint8)
                                    for f in _features(records, self.blob_name, "OFRecordBytesDecoder")]), records)


class OFRecordImageDecoder(Module):
    """forward(records) -> a TensorBuffer of decoded HWC images (uint8) from feature `blob_name`."""

    def __init__(self, blob_name, color_space="BGR", name=None):
        super().__init__()
        self.bytes = OFRecordBytesDecoder(blob_name)
        self.color_space = color_space

    def forward(self, records):
        from ..._image import image_decode
        return _globalized(image_decode(self.bytes(records), color_space=self.color_space), records)


class OFRecordImageDecoderRandomCrop(Module):
    """Decoded images, each randomly cropped (area fraction in random_area, aspect ratio in
    random_aspect_ratio; the whole image after num_attempts misses)."""

    def __init__(self, blob_name, color_space="BGR", num_attempts=10, random_seed=None,
                 random_area=(0.08, 1.0), random_aspect_ratio=(0.75, 1.333333), name=None):
        super().__init__()
        self.decode = OFRecordImageDecoder(blob_name, color_space)
        self.num_attempts, self.random_area, self.random_aspect_ratio = num_attempts, list(random_area), \
            list(random_aspect_ratio)
        self._rng = np.random.default_rng(random_seed)

    def forward(self, records):
        from ..._image import image_random_crop
        return _globalized(image_random_crop(self.decode(records), self.num_attempts, int(self._rng.integers(1 << 31)),
                                             self.random_area, self.random_aspect_ratio), records)


class COCOReader(Module):
    """forward() -> (image, image_id, image_size, gt_bbox, gt_label, gt_segm, gt_segm_index) for
    the next batch_size images of a COCO annotation file (global with placement / sbp, as
    OFRecordReader's: split(0) takes every n-th image, stride_partition, or a balanced range):
    image a TensorBuffer of the encoded
    files (decode with flow.image_decode), image_id int64 (batch,), image_size int32 (batch, 2) as
    (height, width), gt_bbox a TensorBuffer of (n, 4) float boxes (x1, y1, x2, y2), gt_label of
    (n,) int32 contiguous category ids (1-based, in the order of the file's categories), gt_segm of
    (k, 2) polygon points and gt_segm_index of (k, 3) rows (polygon, point, object)."""

    def __init__(self, annotation_file, image_dir, batch_size, shuffle=True, random_seed=None,
                 group_by_aspect_ratio=True, remove_images_without_annotations=True, stride_partition=True,
                 device=None, placement=None, sbp=None):
        super().__init__()
        self.placement, self.sbp = _global_layout(placement, sbp, batch_size, None, "COCOReader")
        with open(annotation_file) as f:
            coco = json.load(f)
        self.image_dir, self.batch_size, self.shuffle = image_dir, batch_size, shuffle
        self.group_by_aspect_ratio = group_by_aspect_ratio
        self.category = {c["id"]: i + 1 for i, c in enumerate(sorted(coco.get("categories", []), key=lambda c: c["id"]))}
        anns = {}
        for a in coco.get("annotations", []):
            if not a.get("iscrowd", 0):
                anns.setdefault(a["image_id"], []).append(a)
        self.images = [im for im in coco["images"] if anns.get(im["id"]) or not remove_images_without_annotations]
        if self.placement is not None and self.sbp == _split0():
            # Data parallel: rank k of n takes every n-th image from the k-th (stride_partition)
            # or the k-th balanced range, and batch_size / n images a batch.
            n, k = len(self.placement._ranks), self.placement._ranks.index(_rank())
            m = len(self.images)
            self.images = self.images[k::n] if stride_partition else self.images[k * m // n:(k + 1) * m // n]
            self.batch_size //= n
        if not self.images:
            raise RuntimeError(f"COCOReader: no images in {annotation_file}")
        self.anns = anns
        self._rng = np.random.RandomState(random_seed)
        self._order, self._pos = [], 0

    def _next_image(self, want_landscape=None):
        for _ in range(2 * len(self.images) + 1):
            if self._pos >= len(self._order):
                self._order = list(self._rng.permutation(len(self.images)) if self.shuffle else range(len(self.images)))
                self._pos = 0
            im = self.images[self._order[self._pos]]
            self._pos += 1
            if want_landscape is None or (im["width"] >= im["height"]) == want_landscape:
                return im
        return im

    def forward(self):
        from ... import float32, int32, int64, tensor, uint8
        first = self._next_image()
        group = first["width"] >= first["height"] if self.group_by_aspect_ratio else None
        batch = [first] + [self._next_image(group) for _ in range(self.batch_size - 1)]
        images, boxes, labels, segm, segm_index = [], [], [], [], []
        for im in batch:
            with open(os.path.join(self.image_dir, im["file_name"]), "rb") as f:
                images.append(tensor(np.frombuffer(f.read(), np.uint8).copy(), dtype=uint8))
            objs = self.anns.get(im["id"], [])
            boxes.append(tensor(np.array([[x, y, x + w, y + h] for x, y, w, h in (o["bbox"] for o in objs)],
                                         np.float32).reshape(-1, 4), dtype=float32))
            labels.append(tensor(np.array([self.category[o["category_id"]] for o in objs], np.int32), dtype=int32))
            pts, idx = [], []
            for oi, o in enumerate(objs):
                for pi, poly in enumerate(o.get("segmentation") or []):
                    for k in range(len(poly) // 2):
                        pts.append(poly[2 * k:2 * k + 2])
                        idx.append([pi, k, oi])
            segm.append(tensor(np.array(pts, np.float32).reshape(-1, 2), dtype=float32))
            segm_index.append(tensor(np.array(idx, np.int32).reshape(-1, 3), dtype=int32))
        image_id = tensor([im["id"] for im in batch], dtype=int64)
        image_size = tensor([[im["height"], im["width"]] for im in batch], dtype=int32)
        return tuple(_globalized(o, self) for o in (_buffer(images), image_id, image_size, _buffer(boxes),
                                                     _buffer(labels), _buffer(segm), _buffer(segm_index)))


OfrecordRawDecoder = OFRecordRawDecoder  # OneFlow's other spelling (nn.OfrecordRawDecoder)

__all__ = ["OFRecordReader", "OFRecordRawDecoder", "OfrecordRawDecoder", "OFRecordBytesDecoder", "OFRecordImageDecoder",
           "OFRecordImageDecoderRandomCrop", "COCOReader"]
