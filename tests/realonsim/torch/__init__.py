"""tests/realonsim/torch — runs the REAL training programs (examples/hf/hf_train.py,
examples/vision/vision_train.py) on the SIMULATION: `import torch` gives simtorch (examples/sim/),
with the few real APIs the programs call that the simulated libraries lack added here. With
PYTHONPATH=tests/realonsim:examples/sim/simmodels/site-packages:examples/sim (and the fake CUDA of
`make fake progs`), tests/integration/gpu_programs.sh and `VALIDATE_PROGRAMS=shim` of
scripts/gpu-beyond.sh check the programs' plumbing (flags, truth line, OOM) without a GPU."""
import functools
import sys
import types

import simtorch
from simtorch._C import Storage

Storage.data_ptr = lambda self: self.ptr  # untyped_storage().data_ptr(): the device address
simtorch.__version__ = "simtorch (simulation)"
simtorch.version = types.SimpleNamespace(cuda=None)
for _name, _mod in list(sys.modules.items()):
    if _name == "simtorch" or _name.startswith("simtorch."):
        sys.modules["torch" + _name[len("simtorch"):]] = _mod


def _real_api():
    """torchvision's `weights=` and timm's create_model(), over the simulated models (where the
    simulated library is on the path)."""
    try:
        import torchvision.models as tvm
    except ImportError:
        tvm = None
    if tvm is not None:
        sim_resnet50 = tvm.resnet50

        @functools.wraps(sim_resnet50)
        def resnet50(weights=None, num_classes=1000):
            assert weights is None, "the simulation has no pretrained weights"
            return sim_resnet50(num_classes=num_classes)

        tvm.resnet50 = resnet50
    try:
        import timm
    except ImportError:
        return

    def create_model(name, pretrained=False, num_classes=1000, img_size=224):
        assert name == "vit_base_patch16_224" and not pretrained, name
        return timm.vit_base_patch16_224(num_classes=num_classes, img_size=img_size)

    timm.create_model = create_model


_real_api()
