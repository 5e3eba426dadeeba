"""OneFlow 0.x's ``ActivationType`` enum values (``op_conf_util.kRelu``...), as its op_conf.proto
numbers them; the 0.x model scripts compare an ``activation`` argument against them."""
kNone, kTanH, kSigmoid, kRelu = 0, 1, 2, 3
ActivationType = {"kNone": kNone, "kTanH": kTanH, "kSigmoid": kSigmoid, "kRelu": kRelu}
