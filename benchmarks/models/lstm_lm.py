"""An LSTM language model (embedding, a 2-layer LSTM, a linear decoder over the vocabulary), as in
the word-language-model examples of both libraries. Benchmark: batch 32, sequence 64, hidden 256."""

SIZES = {"full": dict(batch=32, seq=64, vocab=10000, embed=256, hidden=256, layers=2),
         "tiny": dict(batch=2, seq=8, vocab=50, embed=8, hidden=16, layers=2)}
UNIT = "tokens"
REFERENCE_PARAMS = None


def items(cfg):
    return cfg["batch"] * cfg["seq"]


def build(lib, cfg):
    nn = lib.nn

    class LSTMLanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(cfg["vocab"], cfg["embed"])
            self.rnn = nn.LSTM(cfg["embed"], cfg["hidden"], cfg["layers"], batch_first=True)
            self.decoder = nn.Linear(cfg["hidden"], cfg["vocab"])

        def forward(self, ids):
            out, _ = self.rnn(self.encoder(ids))
            return self.decoder(out)

    return LSTMLanguageModel()


def batch(lib, cfg, rng):
    ids = rng.integers(0, cfg["vocab"], (cfg["batch"], cfg["seq"] + 1))
    return (lib.tensor(ids[:, :-1]),), lib.tensor(ids[:, 1:])


def loss(lib, out, target):
    return lib.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))
