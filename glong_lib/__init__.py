"""glong_lib: a readable implementation of G-Long (graph-enhanced long-term dialogue memory).

One module per pipeline stage, data flowing one way:
``loaders`` -> ``extraction`` -> ``salience`` -> ``memory`` -> ``retrieval`` -> ``generation``
-> ``evaluation``; ``schema`` holds the shared dataclasses, ``models`` the model profiles,
``viz`` the figures and ``cli`` the ``glong`` command.
"""

__version__ = "0.1.0"
