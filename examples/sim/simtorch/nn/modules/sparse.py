"""simtorch/nn/modules/sparse.py — SIMULATION of torch.nn.Embedding: a (num, dim) table; forward
gathers rows (saving the indices); its backward makes a dense gradient as large as the table."""
from .. import functional as F
from ..parameter import Parameter
from .linear import _cpu
from .module import Module


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(_cpu(num_embeddings, embedding_dim))

    def forward(self, input):  # noqa: A002
        return F.embedding(input, self.weight)
