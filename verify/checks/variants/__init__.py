r"""Checks of the model variants: the claims R1-R6 of the authors' rebuttal and its reviewers,
each against simulations of the variant and the theory's predictions for it
(:mod:`theory.variants`).

=====  ==========================================================================================
claim  statement (as the rebuttal or the reviewer puts it)
=====  ==========================================================================================
R1     the analysis also holds if the scale rho varies across examples
R2     a one-step optimisation from a randomly initialised nu satisfies Assumption 3.3
       (:math:`\|\nu\| = \Theta(1/\|\mu\|)`, nu aligned with :math:`\mu_{+1} - \mu_{-1}`)
R3     with the FFN and nonlinearity fixed, the problem remains a token selection problem given
       the token scores, and similar results hold
R4     the exponential time steps arise from the softmax, not from the shape of the loss
R5     even when the label noise is small, the update at some time step can be dominated by
       the noisy samples
R6     (reviewers) once nu is also trained, what does it do to the attention? The authors: a
       linear model memorises instead of the token selection
=====  ==========================================================================================

Two kinds of check per claim: the theory's prediction for the variant against the simulation
(expected to agree unless a disagreement is registered with its mechanism), and the claim
itself stated as a measurable outcome (expected to hold where the theory predicts it does; a
registered disagreement where the theory predicts it fails, with the numbers that show why).
The runs: :mod:`.runs`; the checks: one module a claim; the table: :mod:`.catalogue`.
"""
