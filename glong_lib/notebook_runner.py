"""Execute the notebook suite with papermill: the project's main job (``glong notebooks``).

Two modes:

* ``smoke``: tiny sizes (``SMOKE=True`` injected), outputs and figures go to ``out`` so nothing
  committed changes. This is what the tests run.
* default: the classroom sizes each notebook declares. With ``inplace`` the committed notebooks
  and ``figures/`` are refreshed (no parameters injected, so the committed cells stay as written).
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from .config import get_profile
from .errors import DataError
from .models import cache_root

#: The repository's notebooks folder (the library is installed editable from the repo).
REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
FIGURES_DIR = REPO_ROOT / "figures"


@dataclass
class NotebookRun:
    name: str
    seconds: float
    output: Path


def list_notebooks(folder: Path = NOTEBOOKS_DIR, only: Optional[Sequence[str]] = None) -> list[Path]:
    """Notebooks in run order (their numeric prefix); ``only`` keeps names starting with a prefix."""
    # a leading "." is a run in progress (".x.ipynb.running.ipynb"), not a notebook
    books = sorted(p for p in Path(folder).glob("*.ipynb") if not p.name.startswith(("_", ".")))
    if only:
        books = [b for b in books if any(b.name.startswith(o) for o in only)]
    return books


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def clean_outputs(path: Path) -> None:
    """Make an executed notebook fit to commit: papermill's absolute input/output paths become bare
    names (a notebook says nothing about the machine that ran it), and progress-bar widgets (their
    outputs and the saved widget state) are dropped: they render as noise outside a live kernel."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    meta = nb.metadata.get("papermill", {})
    for key in ("input_path", "output_path"):
        if key in meta:
            meta[key] = Path(meta[key]).name
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.get("outputs", []) if WIDGET_MIME not in o.get("data", {})]
    nbformat.write(nb, str(path))


def _quiet_kernels(log: Path):
    """A kernel manager whose kernels write their own stderr to ``log``, not to the terminal: on
    Ctrl-C a kernel printed a 20-line traceback of its dying sockets under the one-line message."""
    from jupyter_client.manager import AsyncKernelManager

    class QuietKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kw["stderr"] = open(log, "ab")  # noqa: SIM115 - the kernel process holds it; closed when it exits
            try:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            finally:
                kw["stderr"].close()  # the child has its own copy

    return QuietKernelManager


def execute(book: Path, target: Path, params: dict, kernel_log: Optional[Path] = None) -> None:
    """Run one notebook with papermill; a failing cell is one line naming the notebook, the cell and
    the error (papermill's own exception carries the kernel's whole traceback). The kernel's own
    stderr goes to ``kernel_log`` (default: ``kernels.log`` beside the executed notebook).
    Papermill saves as it goes: it writes a temporary sibling, renamed over ``target`` when the run
    ends, so an interrupted run leaves ``target`` as it was (an ``--inplace`` run: the committed one)."""
    import papermill as pm

    running = target.with_name(f".{target.name}.running.ipynb")
    try:
        pm.execute_notebook(str(book), str(running), parameters=params, cwd=str(book.parent),
                            kernel_name="python3", progress_bar=False, log_output=False,
                            kernel_manager_class=_quiet_kernels(kernel_log or target.parent.resolve() / "kernels.log"))
        os.replace(running, target)
    except pm.PapermillExecutionError as e:
        os.replace(running, target)  # the executed notebook holds the failing cell's traceback
        raise DataError(f"cell {e.exec_count} failed: {e.ename}: {' '.join(str(e.evalue).split())[:200]} "
                        f"(the executed notebook with the full traceback: {target})", path=book.name) from None
    finally:
        running.unlink(missing_ok=True)  # interrupted (Ctrl-C) or failed to start: nothing half-run is kept


@contextmanager
def _environment(values: dict[str, str]):
    """Set ``values`` in this process's environment for what runs inside (the kernels it starts),
    then put back what was there: the runner is also called in-process (tests, the CLI), and a
    figure folder left set would send later figures into the committed figures/."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_notebooks(smoke: bool = False, profile: Optional[str] = None, out: Optional[Path] = None,
                  inplace: bool = False, only: Optional[Sequence[str]] = None,
                  folder: Path = NOTEBOOKS_DIR, extra: Optional[dict] = None, log=print) -> list[NotebookRun]:
    """Run each notebook top to bottom with papermill; stop at the first failure (it raises).

    ``profile``: the one every kernel runs under; None takes ``$GLONG_PROFILE``, else ``offline``.
    The notebooks read ``$GLONG_PROFILE`` before their own ``PROFILE`` (Colab's setup cell sets it),
    so the runner puts the chosen name there: a value left in the environment cannot override it."""
    if inplace and smoke:
        raise DataError("--inplace refreshes the committed notebooks with a full run; it cannot be --smoke")
    from_env = profile is None
    profile = profile or os.environ.get("GLONG_PROFILE") or "offline"
    try:  # checked here, not in a kernel: an unknown name is one line, not a traceback
        get_profile(profile)
    except DataError as e:
        raise DataError(f"GLONG_PROFILE: {e}" if from_env else str(e)) from None
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError("no notebooks folder here (an installed glong ships no notebooks): run from a clone of the "
                        "repository, or pass --folder with a copy of its notebooks/", path=folder)
    # a checkout keeps its runs in build/; anywhere else (an installed wheel) they go to the working folder
    default_out = (REPO_ROOT / "build") if folder == NOTEBOOKS_DIR else Path.cwd() / "glong-notebooks"
    out = Path(out or default_out / ("notebooks-smoke" if smoke else "notebooks"))
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise DataError("is a symlink or not a folder; executed notebooks go into a folder", path=out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DataError(f"cannot create the folder ({e.strerror or type(e).__name__})", path=out) from None
    params: dict = dict(extra or {})
    if smoke:
        params.update(SMOKE=True, FIGURES_DIR=str((out / "figures").resolve()))
    if profile != "offline":
        params["PROFILE"] = profile
    runs = []
    books = list_notebooks(folder, only)
    if not books:
        raise DataError(f"no notebook matches {', '.join(only) if only else '*'}", path=folder)
    # the kernels inherit this process's environment: make the mode, the cache and the figure folder
    # explicit (a notebook run by hand caches beside itself; run here, it shares the command line's cache).
    # Smoke figures go beside the executed copies; a full run refreshes the repository's figures/ (a
    # notebook's own FIGURES_DIR = "figures" is for a reader running it by hand, e.g. on Colab).
    kernel_env = {"GLONG_SMOKE": "1" if smoke else "0", "GLONG_PROFILE": profile,
                  "GLONG_CACHE": str(cache_root()),
                  "GLONG_FIGURES_DIR": str((out / "figures").resolve() if smoke
                                           else folder.resolve().parent / "figures")}
    with _environment(kernel_env):
        for book in books:
            target = book if inplace else out / book.name
            start = time.perf_counter()
            execute(book, target, params, kernel_log=out.resolve() / "kernels.log")
            clean_outputs(target)
            runs.append(NotebookRun(book.name, time.perf_counter() - start, target))
            log(f"{book.name:<45} {runs[-1].seconds:7.1f} s")
    log(f"{'total':<45} {sum(r.seconds for r in runs):7.1f} s")
    return runs
