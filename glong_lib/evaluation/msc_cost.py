"""What the MSC evaluation's tokens cost (paper Table 6) and the paper's own numbers, quoted, that its
tables are printed beside (Tables 1, 6 and 14)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..errors import DataError


@dataclass(frozen=True)
class PriceTable:
    """US dollars per million tokens; default: gpt-4o-mini's list prices (the paper's Table 6)."""

    input_per_m: float = 0.15
    output_per_m: float = 0.60
    name: str = "gpt-4o-mini"


GPT4O_MINI = PriceTable()


def cost_usd(input_tokens: float, output_tokens: float, price: PriceTable = GPT4O_MINI) -> float:
    """Dollars for ``input_tokens`` in and ``output_tokens`` out.

    The paper's Table 6, MSC, LD-Agent: (15,767 main + 11,352 memory input) tokens in and 5,910
    generated, per dialogue; times 1,000 dialogues gives its "$7.61 per 1K":

    >>> round(1000 * cost_usd(15767 + 11352, 5910), 2)
    7.61
    >>> round(1000 * cost_usd(28058, 0), 2)   # Long context: 4.21
    4.21
    """
    return input_tokens * price.input_per_m / 1e6 + output_tokens * price.output_per_m / 1e6


def reduction(ours: float, baseline: float) -> float:
    """Relative saving of ``ours`` against ``baseline`` (the paper's 63.0% = 1 - 10,380/28,058).

    >>> round(reduction(10380, 28058), 3)
    0.63
    """
    if baseline <= 0:
        raise DataError("the baseline must be positive to compute a reduction")
    return 1.0 - ours / baseline


# --------------------------------------------------------------------------- the paper's numbers (quoted)

#: Table 14, MSC (N = 100, x100): the reranked top 3 against the un-reranked semantic top 5: B-1, B-2, B-3, B-4, R-L.
PAPER_TABLE14_MSC = {"No rerank (top-5)": [20.07, 5.65, 1.46, 0.54, 17.43],
                     "G-Long (top-3)": [20.28, 6.23, 1.73, 0.60, 17.84]}

#: Table 1, MSC (N = 500, gpt-4o-mini, x100): per session (S2..S5) BLEU-2, BLEU-3, ROUGE-L, then the average.
PAPER_TABLE1_MSC = {
    "No history": [4.64, 1.26, 16.38, 4.35, 1.19, 15.73, 4.06, 1.25, 15.90, 4.59, 1.21, 15.85, 4.56, 1.22, 15.96],
    "Long context": [5.73, 1.71, 17.31, 5.62, 1.56, 16.99, 5.53, 1.57, 16.60, 5.64, 1.60, 16.66, 5.63, 1.61, 16.89],
    "MemoryBank": [5.58, 1.76, 17.46, 5.34, 1.52, 16.94, 5.35, 1.51, 16.83, 5.46, 1.49, 16.94, 5.43, 1.57, 17.04],
    "LD-Agent": [5.84, 1.70, 17.66, 5.78, 1.57, 17.27, 5.68, 1.59, 17.04, 6.03, 1.66, 17.34, 5.83, 1.63, 17.33],
    "G-Long": [6.35, 2.00, 18.20, 6.25, 1.79, 17.90, 6.39, 1.80, 17.77, 6.59, 1.77, 18.04, 6.40, 1.84, 17.98],
}
PAPER_TABLE1_COLUMNS = [f"{s} {m}" for s in ("S2", "S3", "S4", "S5", "Avg") for m in ("B-2", "B-3", "R-L")]


def paper_difference(metric: str) -> Optional[float]:
    """The paper's G-Long minus long-context difference (Table 1 averages, x100) on a metric of ours:
    B-2, B-3 or R-L on any scale (the paper's numbers are nlg-eval's); None for other metrics.

    >>> paper_difference("nlg_b2"), paper_difference("rougeL"), paper_difference("b4")
    (0.77, 1.09, None)
    """
    column = {"b2": "Avg B-2", "b3": "Avg B-3", "rougeL": "Avg R-L"}.get(metric.split("_")[-1])
    if column is None:
        return None
    i = PAPER_TABLE1_COLUMNS.index(column)
    return round(PAPER_TABLE1_MSC["G-Long"][i] - PAPER_TABLE1_MSC["Long context"][i], 2)


#: Table 6, MSC (N = 500): main tokens, memory input, memory generated (per dialogue), total $ per 1K.
PAPER_TABLE6_MSC = {
    "Long context": (28058, 0, 0, 4.21),
    "MemoryBank": (13742, 14645, 2295, 5.63),
    "LD-Agent": (15767, 11352, 5910, 7.61),
    "G-Long": (10380, 0, 0, 1.56),
}
PAPER_TABLE6_COLUMNS = ["Main (tokens)", "Memory input", "Memory gen.", "Total cost ($/1K)"]


def paper_table1() -> list[dict[str, Any]]:
    """The paper's Table 1 (MSC) as rows, for display beside ours."""
    return [{"method": m, **dict(zip(PAPER_TABLE1_COLUMNS, v))} for m, v in PAPER_TABLE1_MSC.items()]


def paper_table6() -> list[dict[str, Any]]:
    """The paper's Table 6 (MSC) as rows, with the cost recomputed from the token counts by
    :func:`cost_usd` beside the printed one (within a cent: MemoryBank's 5.635 rounds up)."""
    return [{"method": m, **dict(zip(PAPER_TABLE6_COLUMNS, v)),
             "recomputed ($/1K)": round(1000 * cost_usd(v[0] + v[1], v[2]), 2)} for m, v in PAPER_TABLE6_MSC.items()]
