"""glong_lib: a readable implementation of G-Long (graph-enhanced long-term dialogue memory).

One module or package per pipeline stage, data flowing one way:
``loaders`` -> ``extraction`` -> ``summarizer`` -> ``salience`` -> ``memory`` -> ``retrieval`` ->
``generation`` -> ``agent`` -> ``evaluation``; ``schema`` holds the shared dataclasses, ``config``
the profiles and every stage's settings, ``models`` the loading of what a profile names, ``viz``
the figures and ``cli`` (with ``commands``) the ``glong`` command. Imports follow the same order
(the layer contract in ``pyproject.toml``, drawn in ``CONTRIBUTING.md``).
"""

__version__ = "0.1.0"
