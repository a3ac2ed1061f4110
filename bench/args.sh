# args.sh - what bench/ab.sh and bench/pair.sh share: sourced, not run. `me` names the
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
