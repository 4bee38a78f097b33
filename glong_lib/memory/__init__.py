"""The graph memory bank (paper section 3.3): ``graph`` holds the memory itself (entity nodes in a
faiss index, attributed edges in a networkx MultiDiGraph); ``persistence`` saves and loads it
so that a memory is never lost; ``checks`` says whether a state is a valid memory (run on every load
and save); its settings are ``config.MemorySettings`` (a profile's ``memory``).
Encoder output becomes unit vectors in ``glong_lib.vectors``, below both memory and retrieval.
"""

from .checks import (  # noqa: F401
    EDGE_FIELDS,
    MAX_ABS_TIME_S,
    check_state,
)
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
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_FILE,
    NewerFormat,
    check_target,
    editing,
    memory_size,
    read_memory,
    save_memory,
)
