"""Display labels for the dictionary keys the notebooks show.

A notebook keeps such a key in English, since code looks values up by it; what it prints or
draws is ``tr(key)`` (``helpers.i18n.translate``), the key in the learner's language. The keys
that helpers itself makes are marked where they are made (e.g. ``split_metrics``); these are
the ones a notebook makes, marked here so that the Korean catalogue holds them.
"""

from .i18n import N_

# 03: the two places the gradient is measured, and the two scalings compared
GRADIENT_PLACES = (N_("at the scores"), N_("at the query"))
SCALINGS = (N_("no scale"),)

# 10b: the three models of section 3's table
INDUCTION_MODELS = (N_("untrained (2 layers)"), N_("trained, 1 layer"), N_("trained, 2 layers"))

# 04: what each axis of the toy embeddings means (data/toy_embeddings.json), as section 1 prints it
TOY_AXIS_MEANINGS = (
    N_("finance: bank accounts, loans, paying"),
    N_("rivers, boats, fishing"),
    N_("people, animals and agents (a robot, 'it')"),
    N_("physical things you can pick up, sit on or sail"),
    N_("verbs: something happens"),
    N_("somewhere you can be"),
    N_("describes how a thing looks"),
    N_("grammar glue: the, to, of, on"),
)
