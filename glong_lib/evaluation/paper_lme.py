"""The paper's LongMemEval retrieval numbers (Figure 4, Tables 4, 5, 7, 13), for context beside the
suite's own: a different data set (LME sessions, LLM-built memories, gpt-4o-mini), not comparable
number for number. ``evaluation.retrieval`` re-exports them (``RE.PAPER_*``)."""

#: The paper's LongMemEval retrieval numbers, for context beside ours (a different data set:
#: LME sessions, LLM-built memories and gpt-4o-mini; not comparable number for number).
#: Figure 4 (N = 500), read off the plot (about +-0.01): Recall@K per method.
PAPER_LME_FIGURE4 = {
    "G-Long": {1: 0.33, 3: 0.62, 5: 0.72, 10: 0.83, 15: 0.90, 20: 0.93},
    "MemoryBank": {1: 0.24, 3: 0.44, 5: 0.57, 10: 0.73, 15: 0.81, 20: 0.86},
    "LD-Agent": {1: 0.23, 3: 0.44, 5: 0.55, 10: 0.67, 15: 0.735, 20: 0.765},
}
#: Table 4 (N = 500) Recall@3/5, Table 5 (N = 50 subset) Recall@1/3/5, Table 7 (hops) Recall@3/5.
PAPER_LME_TABLE4 = {"MemoryBank": {3: 0.4422, 5: 0.5693}, "LD-Agent": {3: 0.4462, 5: 0.5519},
                    "G-Long": {3: 0.6286, 5: 0.7220}}
PAPER_LME_TABLE5 = {"MemoryBank": {1: 0.40, 3: 0.62, 5: 0.77}, "LD-Agent": {1: 0.47, 3: 0.68, 5: 0.80},
                    "FraCom": {1: 0.19, 3: 0.40, 5: 0.42}, "HippoRAG": {1: 0.12, 3: 0.36, 5: 0.46},
                    "HippoRAG + G-Long triplets": {1: 0.17, 3: 0.66, 5: 0.86},
                    "G-Long": {1: 0.71, 3: 0.90, 5: 0.92}}
PAPER_LME_TABLE7 = {"G-Long (L = 1)": {3: 0.6286, 5: 0.7220}, "G-Long (L = 2)": {3: 0.5314, 5: 0.6042}}
#: Figure 4 (LongMemEval, N = 500): MRR@20 as the paper states it in the text beside the figure.
PAPER_LME_MRR20 = {"G-Long": 0.674, "MemoryBank": 0.517, "LD-Agent": 0.495}
#: Table 13 (LongMemEval, N = 500): Recall@3 with and without the importance score in the rerank.
PAPER_LME_TABLE13 = {"w/o importance": {3: 0.6179}, "w/ importance": {3: 0.6286}}
