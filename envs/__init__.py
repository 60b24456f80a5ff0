"""rummyzoo environments: cards, melds, rules and the PettingZoo envs of each variant."""
