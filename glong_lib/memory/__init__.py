"""The graph memory bank (paper section 3.3): ``graph`` holds the memory itself (entity nodes in a
faiss index, attributed edges in a networkx MultiDiGraph); ``persistence`` saves and loads it
so that a memory is never lost; its settings are ``config.MemorySettings`` (a profile's ``memory``).
Encoder output becomes unit vectors in ``glong_lib.vectors``, below both memory and retrieval.
"""

from .files import LOCK_FILE  # noqa: F401
from .graph import (  # noqa: F401
    POLICIES,
    SINGLE_VALUED_RELATIONS,
    GraphMemory,
    build_memory,
)
from .hash_encoder import (  # noqa: F401
    HashEncoder,
)
from .persistence import (  # noqa: F401
    EDGE_FIELDS,
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_FILE,
    MAX_ABS_TIME_S,
    NewerFormat,
    check_state,
    check_target,
    editing,
    memory_size,
    read_memory,
    save_memory,
)
