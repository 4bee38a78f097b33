"""Evaluation, one module per question asked of the pipeline (the top layer under viz and the CLI):

* ``metrics``: BLEU, ROUGE-L, Hit@k, Recall@k, MRR, P/R/F1, AUC and bootstrap intervals;
* ``extraction``: how well an extractor finds the gold triples;
* ``summaries``: ROUGE of a summarizer;
* ``salience``: whether salience weights pick what a reference summary keeps (AUC);
* ``retrieval``: evidence retrieval (any retrievers, the probes);
* ``locomo``: evidence retrieval on LoCoMo, from its turns or its observation sentences;
* ``msc``: the end-to-end comparison of agents on multi-session chats.

Import the submodule you need, e.g. ``from glong_lib.evaluation import msc``.
"""
