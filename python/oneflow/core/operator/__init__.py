"""``oneflow.core.operator``: op_conf_pb2 (0.x's ActivationType values)."""
