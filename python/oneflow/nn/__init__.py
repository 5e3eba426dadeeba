"""oneflow.nn: the module system (Module, Parameter, containers, layers), nn.init, nn.utils and
nn.functional (filled from the op table by oneflow/__init__.py, plus Python functions)."""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import modules  # noqa: F401
from . import parameter  # noqa: F401
from . import utils  # noqa: F401
from . import attention  # noqa: F401,E402  (sdpa_kernel, SDPBackend)
from .modules import (  # noqa: F401
    GELU, Flatten, Identity, Linear, Module, ModuleDict, ModuleList, ParameterDict, ParameterList,
    ReLU, Sequential, SiLU, Sigmoid, Tanh, Unflatten,
)
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules.batchnorm import *  # noqa: F401,F403,E402  (BatchNorm1d/2d/3d)
from .modules.conv import *  # noqa: F401,F403,E402  (Conv*d, ConvTranspose*d)
from .modules.normalization import *  # noqa: F401,F403,E402  (InstanceNorm, GroupNorm, LayerNorm, LRN)
from .modules.pooling import *  # noqa: F401,F403,E402  (max/avg/adaptive/unpool/LP pools)
from .modules.activation import *  # noqa: F401,F403,E402  (activation modules)
from .modules.loss import *  # noqa: F401,F403,E402  (loss modules)
from .modules.dropout import *  # noqa: F401,F403,E402  (dropout modules)
from .modules.sparse import *  # noqa: F401,F403,E402  (Embedding, EmbeddingBag)
from .modules.padding import *  # noqa: F401,F403,E402  (padding modules)
from .modules.upsampling import *  # noqa: F401,F403,E402  (Upsample, Fold, PixelShuffle, distances)
from .modules.bilinear import Bilinear  # noqa: F401,E402
from .modules.rnn import *  # noqa: F401,F403,E402  (RNN, LSTM, GRU and their cells)
from .modules.attention import *  # noqa: F401,F403,E402  (MultiheadAttention)
from .modules.transformer import *  # noqa: F401,F403,E402  (Transformer, encoder/decoder and layers)
from .modules.lazy import *  # noqa: F401,F403,E402  (LazyLinear, LazyConv*d, LazyBatchNorm*d, ...)
from .modules.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401,E402
from .modules.data_parallel import DataParallel, NLLLoss2d  # noqa: F401,E402
from .graph import Graph, GraphConfig  # noqa: F401,E402  (static graphs)
from .modules.fused import *  # noqa: F401,F403,E402  (FusedBatchNorm*d, FusedMLP)
from .modules.quantization import *  # noqa: F401,F403,E402  (observers, FakeQuantization, Quantization)
from .qat import QatConv1d, QatConv2d, QatConv3d  # noqa: F401,E402  (oneflow.nn.qat; upstream also exports them in nn)
from .modules.data import *  # noqa: F401,F403,E402  (CoinFlip, CropMirrorNormalize)
from .modules.ofrecord import *  # noqa: F401,F403,E402  (OFRecordReader and decoders, COCOReader)
from . import image  # noqa: E402,F401  (OneFlow's image modules: nn.image.Resize, decode, flip, ...)
from ._linear_cross_entropy import (  # noqa: E402,F401  (fused head + loss, chunked)
    LinearCrossEntropyLoss, LinearCrossEntropyOptions,
)
