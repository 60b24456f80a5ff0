"""The largest networks a checkpoint may hold: the bounds the ``.rz`` format checks a network's
specification against before it builds anything (:mod:`rummyzoo.agents.safe`), which the
training config and the model builder check too, so that a run is refused before it starts
rather than at its first save or load. No torch here: the config reads them."""

#: Hidden layers of one network (the policy's, the value's, the Q-network's).
MAX_LAYERS = 8
#: Units of one hidden layer.
MAX_WIDTH = 4096
#: Bytes of a checkpoint's weights file (its tensors and their header).
MAX_WEIGHTS_BYTES = 1 << 30
