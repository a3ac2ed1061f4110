# args.sh - what the scripts of bench/ share: sourced, not run. `me` names the
# calling script in its messages.

# need_count NAME VALUE MIN: VALUE is a whole number >= MIN, else a message
# naming NAME and exit 2.
need_count() {
  if [[ ! $2 =~ ^[0-9]+$ ]] || ((10#$2 < $3)); then
    echo "$me: $1 must be a whole number >= $3, got '$2'" >&2
    exit 2
  fi
}

# set_documents SET: `files` gets the documents bench/run.sh wrote to
# ${TMPDIR:-/tmp}/simdbpe-bench/SET, else a message and exit 2.
set_documents() {
  local dir=${TMPDIR:-/tmp}/simdbpe-bench/$1
  files=("$dir"/*)
  if [ ! -e "${files[0]}" ]; then
    echo "$me: no documents in $dir (run bench/run.sh first)" >&2
    exit 2
  fi
}

# median: the median of the numbers on stdin, one a line.
median() {
  sort -n | awk '{v[NR] = $1}
    END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# build_gigatoken BUILD_DIR: `gtenc` gets the path of GigaToken's encoder, built by the
# peer's own build.sh (offline, Debian's Rust crates, nightly toolchain) from
# $SIMDBPE_GIGATOKEN_DIR (default ../shared/peers/gigatoken) into BUILD_DIR/gigatoken.
# If build.sh fails, its output is printed as it is and the script exits 1.
build_gigatoken() {
  local dir=${SIMDBPE_GIGATOKEN_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/../shared/peers/gigatoken}
  if [ ! -x "$dir/build.sh" ]; then
    echo "$me: GigaToken's source not found at $dir (set SIMDBPE_GIGATOKEN_DIR)" >&2
    exit 2
  fi
  mkdir -p "$1/gigatoken"
  echo "# building GigaToken ($dir/build.sh) into $1/gigatoken" >&2
  if ! CARGO_TARGET_DIR="$1/gigatoken" "$dir/build.sh" >"$1/gigatoken/build.out" 2>&1; then
    echo "$me: GigaToken's build.sh failed; its output:" >&2
    cat "$1/gigatoken/build.out" >&2
    exit 1
  fi
  gtenc=$(grep -a -m1 '/gtenc$' "$1/gigatoken/build.out")
}

# tiktoken_dir MODEL...: `ranks` gets the directory of the .tiktoken rank files GigaToken
# reads ($SIMDBPE_TIKTOKEN_DIR, default ../shared/models/tiktoken), else a message naming
# a model GigaToken cannot run (it runs gpt2 = r50k_base, cl100k_base, o200k_base) or the
# missing file, and exit 2.
tiktoken_dir() {
  ranks=${SIMDBPE_TIKTOKEN_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/../shared/models/tiktoken}
  local m f
  for m in "$@"; do
    case "$m" in
      gpt2 | r50k_base) f=r50k_base ;;
      cl100k_base | o200k_base) f=$m ;;
      *)
        echo "$me: GigaToken runs gpt2, cl100k_base and o200k_base, not '$m'" >&2
        exit 2
        ;;
    esac
    if [ ! -f "$ranks/$f.tiktoken" ]; then
      echo "$me: $ranks/$f.tiktoken not found (set SIMDBPE_TIKTOKEN_DIR)" >&2
      exit 2
    fi
  done
}

# stamp: the results lines on stdin with the load average now (read before the run whose
# lines they are) and no peak RSS appended.
stamp() {
  awk -F '\t' -v OFS='\t' -v load="$(cut -d' ' -f1 /proc/loadavg)" '{ print $0, load, "-" }'
}
