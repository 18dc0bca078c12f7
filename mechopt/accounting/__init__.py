"""Privacy accounting of a finite channel after collection.

This package owns what a deployment asks once the mechanism exists:

* the central (ε, δ) after a shuffler mixes n users' reports (:func:`shuffle_epsilon`,
  :func:`shuffle_delta`, the closed form :func:`shuffle_epsilon_closed_form`; see
  ``docs/accounting.md``);
* the privacy-loss distribution of a pair of inputs as a ``dp_accounting`` object
  (:func:`privacy_loss_distribution`) and the ε of T collections (:func:`compose_epsilon`);
* the ``mechopt account`` command.
"""

from ._pld import compose_epsilon, privacy_loss_distribution, worst_pair
from ._shuffle import (local_epsilon, shuffle_delta, shuffle_epsilon, shuffle_epsilon_closed_form,
                       shuffle_epsilon_generic)

__all__ = ["compose_epsilon", "local_epsilon", "privacy_loss_distribution", "shuffle_delta", "shuffle_epsilon",
           "shuffle_epsilon_closed_form", "shuffle_epsilon_generic", "worst_pair"]
