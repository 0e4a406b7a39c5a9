"""mwzeval's Evaluator, computed by todeval: switching is one import, either as mwzeval's users
write it or shorter.

    from mwzeval.metrics import Evaluator            # before
    from todeval.mwzeval.metrics import Evaluator    # after (mwzeval's path, one word added)
    from todeval.mwzeval import Evaluator            # the same class
"""

from .metrics import (
    DST_KEYS,
    RESULT_KEYS,
    RICHNESS_KEYS,
    SUCCESS_KEYS,
    TEXT_METRIC_KEYS,
    Evaluation,
    Evaluator,
    mwzeval_view,
)

__all__ = ["DST_KEYS", "RESULT_KEYS", "RICHNESS_KEYS", "SUCCESS_KEYS", "TEXT_METRIC_KEYS", "Evaluation", "Evaluator", "mwzeval_view"]
