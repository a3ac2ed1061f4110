#!/usr/bin/env bash
# run.sh BUILD_DIR - installs the Python package into a fresh virtual
# environment (offline: pip install --no-build-isolation --no-index, linking
# BUILD_DIR/libsimdbpe.a) and runs its tests with pytest, then memcheck.py
# under valgrind.
#
# The interpreter is $SIMDBPE_PYTHON, else Debian's /usr/bin/python3 (where
# python3-pytest and python3-numpy put their modules; the environment sees
# them through --system-site-packages), else python3.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

py=${SIMDBPE_PYTHON:-}
if [ -z "$py" ]; then
  for cand in /usr/bin/python3 python3; do
    if "$cand" -c 'import pytest, numpy, setuptools' 2>/dev/null; then py=$cand; break; fi
  done
fi
if [ -z "$py" ]; then
  echo "run.sh: no python3 with pytest, numpy and setuptools (tools/dev.sh installs them)" >&2
  exit 1
fi

venv=$build/python-venv
rm -rf "$venv"
"$py" -m venv --system-site-packages "$venv"
SIMDBPE_BUILD_DIR=$build "$venv/bin/python" -m pip install -q --no-build-isolation --no-index \
  "$root/python"
cd "$here"
SIMDBPE_CLI=$build/simdbpe "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here"

# The package's calls under valgrind memcheck, which sees reads of
# uninitialised memory that ASan does not (PYTHONMALLOC=malloc: Python's own
# allocator confuses it).
if ! command -v valgrind >/dev/null; then
  echo "run.sh: valgrind is needed for the memcheck of the Python calls (tools/dev.sh installs it)" >&2
  exit 1
fi
PYTHONMALLOC=malloc valgrind -q --error-exitcode=99 --leak-check=no \
  "$venv/bin/python" "$here/memcheck.py"
