#!/usr/bin/env bash
# run.sh BUILD_DIR install|test FILE|memcheck - the Python package's tests,
# one ctest test per step (tests/python.cmake):
#
#   install      installs the package into a fresh virtual environment
#                (offline: pip install --no-build-isolation --no-index,
#                linking BUILD_DIR/libsimdbpe.a), the other steps' fixture;
#   test FILE    runs one test file with pytest; when it passes but skipped
#                some of its tests, it prints which and why and exits 77,
#                which ctest shows as skipped, not passed;
#   memcheck     runs memcheck.py under valgrind memcheck, which sees reads
#                of uninitialised memory that ASan does not
#                (PYTHONMALLOC=malloc: Python's own allocator confuses it).
#
# The interpreter is $SIMDBPE_PYTHON, else Debian's /usr/bin/python3 (where
# python3-pytest and python3-numpy put their modules; the environment sees
# them through --system-site-packages), else python3.
set -euo pipefail
build=$(cd "$1" && pwd)
step=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=$build/python-venv

case "$step" in
  install)
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
    rm -rf "$venv"
    "$py" -m venv --system-site-packages "$venv"
    SIMDBPE_BUILD_DIR=$build "$venv/bin/python" -m pip install -q --no-build-isolation \
      --no-index "$root/python"
    ;;
  test)
    cd "$here"
    report=$(mktemp)
    trap 'rm -f "$report"' EXIT
    set +e
    SIMDBPE_CLI=$build/simdbpe "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
      --junitxml="$report" "$here/$3"
    rc=$?
    set -e
    if [ "$rc" -eq 0 ] && grep -q '<skipped' "$report"; then
      echo "run.sh: $3 passed but skipped some of its tests (above): reported as skipped"
      exit 77
    fi
    exit "$rc"
    ;;
  memcheck)
    if ! command -v valgrind >/dev/null; then
      echo "run.sh: valgrind is needed for the memcheck of the Python calls (tools/dev.sh installs it)" >&2
      exit 1
    fi
    PYTHONMALLOC=malloc valgrind -q --error-exitcode=99 --leak-check=no \
      "$venv/bin/python" "$here/memcheck.py"
    ;;
  *)
    echo "run.sh: install, test FILE or memcheck, not '$step'" >&2
    exit 2
    ;;
esac
