"""``oneflow.core``: the Python forms of OneFlow 0.x's configuration messages that its scripts
import (``from oneflow.core.job import initializer_conf_pb2``, ``from oneflow.core.operator
import op_conf_pb2``)."""
