"""simtorch/utils/data/_utils/collate.py — SIMULATION of default_collate: samples' tensors
stacked on the host (a mapping collated key by key, a tuple or list of samples position by
position, as torch's transposes it). Host tensors hold no memory here."""
from .... import _C
from ...._C import _aten as A
from ...._C._tensor import TensorBase


def default_collate(batch):
    elem = batch[0]
    if isinstance(elem, TensorBase):
        return A.stack(list(batch))
    if isinstance(elem, dict):
        return {k: default_collate([b[k] for b in batch]) for k in elem}
    if isinstance(elem, (tuple, list)):
        return [default_collate(list(s)) for s in zip(*batch)]
    if isinstance(elem, int):
        return A.zeros((len(batch),), _C.int64, "cpu")
    return batch
