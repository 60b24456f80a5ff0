"""rummyzoo environments: cards, melds, rules and the PettingZoo envs of each variant.

Layers, each importing only those below it: :mod:`~rummyzoo.envs.core` (the ``Game`` interface,
errors, option checks), the rules of each variant (``knock_rummy/``, ``ditch_rummy/``,
``rummy500/``), :mod:`~rummyzoo.envs.match` (match play: options shared by every variant,
seeding, totals, rewards), :mod:`~rummyzoo.envs.play` (one loop that plays a match with any
policies) and :mod:`~rummyzoo.envs.aec` with the variant modules (``knock_rummy_v0``...): the
PettingZoo envs.
"""

from rummyzoo.envs.core import ConfigError, IllegalActionError

__all__ = ["ConfigError", "IllegalActionError"]
