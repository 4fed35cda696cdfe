r"""The model variants the authors' rebuttal and its reviewers ask about, one module a family.

Each variant is a validated field of the data model or the training set-up
(:mod:`theory.foundation.data_model`) whose base value gives the paper's model with the
same numbers:

* the loss (``Training.loss``): logistic, exponential, squared (:mod:`~theory.variants.loss`);
* :math:`\rho` per example (``DataModel.rho_spread``) (:mod:`~theory.variants.rho`);
* the head (``Training.head``): fixed, one GD step from a random start, or trained
  (:mod:`~theory.variants.head`);
* the readout (``DataModel.readout``): linear, or a fixed random FFN
  (:mod:`~theory.variants.ffn`, :mod:`~theory.variants.readout`);
* the share of the noisy samples in the gradient (:mod:`~theory.variants.noise_ratio`).

:mod:`~theory.variants.kernels` holds the numeric kernels the simulator's engines call
(NumPy, and mpmath object arrays), :mod:`~theory.variants.gradients` their exact gradients
in SymPy. Nothing is imported here: importing the package loads none of its modules.
"""
