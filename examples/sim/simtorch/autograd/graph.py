"""simtorch/autograd/graph.py — SIMULATION of torch/autograd/graph.py: _engine_run_backward hands
the graph to the engine, which runs it on the autograd thread pt_autograd_0 while this thread
waits (a backward started on that thread, like a checkpoint's, runs there)."""
from .._C import _autograd


def _engine_run_backward(t_outputs, grad_tensors, retain_graph=False):
    return _autograd.run_backward(t_outputs, grad_tensors, retain_graph)
