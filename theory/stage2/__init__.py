r"""Stage 2 of the paper's two-stage analysis: after the softmax saturates.

Once the clean samples select their relevant token, their loss weights fade, the
preconditioner :math:`W^\top W + \|p\|^2 I` grows, and the noisy samples' memorisation can
overtake the signal (the paper's Lemma 4.7: the noisy samples' gaps in stage 2; Remark
4.3: generalisation arrives only after an exponential time). The paper's stage-2
statements are not available: this is the package's own reconstruction.

:mod:`~theory.stage2.preconditioner`: the rank-one closure of the growing preconditioner,
proved symbolically; :mod:`~theory.stage2.flow`: the mean-field flow of the logits it
gives; :mod:`~theory.stage2.laws`: closed-form laws (the separable collapse model, the
saturated gap's slope); :mod:`~theory.stage2.predictions`: what the flow predicts at a
horizon (both regime boundaries, the noisy switch, the late test accuracy, the gap slope).

Nothing is imported here: importing the package loads none of its modules.
"""
