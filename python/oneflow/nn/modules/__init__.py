"""The module classes of oneflow.nn (also importable from oneflow.nn directly)."""
from .activation import *  # noqa: F401,F403  (ReLU ... Softmax2d)
from .container import (  # noqa: F401
    ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential,
)
from .flatten import Flatten, Unflatten  # noqa: F401
from .linear import Identity, Linear  # noqa: F401
from .module import Module  # noqa: F401
from .batchnorm import *  # noqa: F401,F403  (BatchNorm1d/2d/3d)
from .conv import *  # noqa: F401,F403  (Conv*d, ConvTranspose*d)
from .normalization import *  # noqa: F401,F403  (InstanceNorm*d, GroupNorm, LayerNorm, LocalResponseNorm)
from .pooling import *  # noqa: F401,F403  (MaxPool*d, AvgPool*d, Adaptive*Pool*d, MaxUnpool*d, LPPool*d)
from .loss import *  # noqa: F401,F403  (L1Loss ... CTCLoss)
from .dropout import *  # noqa: F401,F403  (Dropout*, AlphaDropout, FeatureAlphaDropout)
from .sparse import *  # noqa: F401,F403  (Embedding, EmbeddingBag)
from .padding import *  # noqa: F401,F403  (ConstantPad*, ZeroPad*, ReflectionPad*, ReplicationPad*, CircularPad*)
from .upsampling import *  # noqa: F401,F403  (Upsample*, Fold, Unfold, PixelShuffle, distances)
from .bilinear import Bilinear  # noqa: F401
from .rnn import *  # noqa: F401,F403  (RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell)
