r"""The ground every stage of the analysis stands on (no stage of the paper of its own).

The data model of the paper's Definition 3.1 with Remark 3.2's weakly relevant tokens and
label noise (:mod:`~theory.foundation.data_model`) and its one NumPy sampler
(:mod:`~theory.foundation.sampling`); the named SymPy symbols
(:mod:`~theory.foundation.symbols`); constraints and the one message form for invalid
input (:mod:`~theory.foundation.validation`); derivation records and their proofs
(:mod:`~theory.foundation.proof`); code generation from SymPy
(:mod:`~theory.foundation.codegen`); the training losses and their weights
(:mod:`~theory.foundation.losses`); overflow-free numeric kernels
(:mod:`~theory.foundation.numerics`); the symbolic expectation operator of the stage-1
moments (:mod:`~theory.foundation.expectation`); the assumptions A1-A8
(:mod:`~theory.foundation.assumptions`) and the step-size condition A5 in plain numbers
(:mod:`~theory.foundation.stability`).

Nothing is imported here: importing the package loads none of its modules.
"""
