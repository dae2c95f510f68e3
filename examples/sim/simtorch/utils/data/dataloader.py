"""simtorch/utils/data/dataloader.py — SIMULATION of torch.utils.data.DataLoader with
num_workers=0: indices in order (a shuffle changes no size), samples fetched and collated on
the host, each batch pinned when pin_memory is set (what the program copies to the device is
the program's business, as in torch)."""
from . import _utils


class _SingleProcessDataLoaderIter:
    def __init__(self, loader):
        self._loader = loader
        self._pin_memory = loader.pin_memory
        self._index = 0

    def __iter__(self):
        return self

    def _next_index(self):
        n, bs = len(self._loader.dataset), self._loader.batch_size
        if self._index >= n or (self._loader.drop_last and self._index + bs > n):
            raise StopIteration
        idx = list(range(self._index, min(self._index + bs, n)))
        self._index += bs
        return idx

    def _next_data(self):
        index = self._next_index()
        data = self._loader.collate_fn([self._loader.dataset[i] for i in index])
        if self._pin_memory:
            data = _utils.pin_memory.pin_memory(data)
        return data

    def __next__(self):
        return self._next_data()


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, **kwargs):
        self.dataset = dataset
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.collate_fn = collate_fn or _utils.collate.default_collate
        self.pin_memory = pin_memory
        self.drop_last = drop_last

    def __iter__(self):
        return _SingleProcessDataLoaderIter(self)

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
