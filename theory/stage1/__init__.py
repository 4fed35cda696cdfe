r"""Stage 1 of the paper's two-stage analysis: the start of training.

At :math:`\tau = 0` (:math:`p = 0`, uniform attention) every token's attention logit moves
at a velocity read off the exact gradient: signal learning for the relevant tokens,
memorisation of each sample's own noise (Lemma 4.5 for clean samples, Lemma 4.6 for noisy
ones in stage 1). Which token wins that race decides what each sample selects, whether
the noisy samples get fitted and, through the learned query's signal-to-noise ratio,
Theorem 4.1's regime (harmful, benign, not overfitting) with Lemma 4.8's test accuracy.

:mod:`~theory.stage1.rates`: the rates, symbolically; :mod:`~theory.stage1.velocity`,
:mod:`~theory.stage1.setting`, :mod:`~theory.stage1.moments`,
:mod:`~theory.stage1.variance`: the velocities from the exact gradient with the terms the
rates drop and their variance; :mod:`~theory.stage1.sampling`: a Monte Carlo of the exact
initial velocities; :mod:`~theory.stage1.predictions`: the stage-1 predictions for one
setting.

Nothing is imported here: importing the package loads none of its modules.
"""
