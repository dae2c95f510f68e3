"""simtorch/utils/data/dataset.py — SIMULATION of torch.utils.data.Dataset (map-style)."""


class Dataset:
    def __getitem__(self, index):
        raise NotImplementedError(type(self).__name__ + ".__getitem__")

    def __len__(self):
        raise NotImplementedError(type(self).__name__ + ".__len__")
