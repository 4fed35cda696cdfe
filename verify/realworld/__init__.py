"""Real-world token selection under label noise: an offline, CPU version of the paper's Table 2.

Pre-trained transformers are fine-tuned in two phases, as in the paper: first a
linear classifier head on the [CLS] output with the whole backbone frozen and
clean labels; then the last layer's query and key projections are re-initialised
and only they are trained on data with symmetric label noise.

Everything here needs the ``realworld`` extra (PyTorch, transformers, ONNX) and
assets shipped inside package wheels, fetched once with
``python -m verify realworld fetch``. Nothing in this subpackage is imported by
the rest of :mod:`verify`; PyTorch is imported only by the modules that use it.
"""
