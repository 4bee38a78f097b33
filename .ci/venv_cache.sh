#!/usr/bin/env bash
# Sourced by .ci/run and .ci/installed_check.sh: where a reusable virtual environment lives.
# A venv is keyed by the hash of what decides its contents (pyproject.toml, the Makefile's install
# steps, the torch pin, the Python version), so any change to dependencies builds a new one from
# scratch (the cold path, which must pass too); an unchanged one is reused (the warm path).
# GLONG_CI_CACHE chooses the folder (default ~/.cache/glong-ci); GLONG_CI_COLD=1 ignores the cache.
venv_key() {  # venv_key NAME -> NAME-<16 hex>
  local name="$1"
  local py
  py="$("${PYTHON:-python3}" -c 'import sys; print(sys.version.split()[0])')"
  printf '%s-%s' "$name" "$( { cat pyproject.toml Makefile; echo "${TORCH:-torch==2.13.0} $py"; } | sha256sum | cut -c1-16)"
}
venv_cache_dir() {  # venv_cache_dir NAME -> the folder for this key (not created)
  echo "${GLONG_CI_CACHE:-$HOME/.cache/glong-ci}/$(venv_key "$1")"
}
