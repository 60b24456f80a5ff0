"""rummyzoo agents: the Policy interface, random play and the heuristic baselines."""

from rummyzoo.agents.base import BasePolicy, Policy, check_parameter
from rummyzoo.agents.random_agent import RandomPolicy

__all__ = ["BasePolicy", "Policy", "RandomPolicy", "check_parameter"]
