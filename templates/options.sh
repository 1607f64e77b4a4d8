# Shared by spark-submit.sh and flink-run.sh.

# Prints the usage text of the script $1 to stderr: its first comment block after the #! line,
# without the leading "# ", up to the first line that is not a comment.
usage() {
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1" >&2
}

# Reads an options file into the array JOB_OPTIONS
# (one --name=value per line; blank lines and # comments skipped; surrounding spaces trimmed),
# leaving out the options that the rest of the command line ("$@" after the file) sets again:
# those win (Beam refuses an option given twice).
read_options() {
  local file="$1" line name arg
  shift
  [[ -f "$file" ]] || { echo "error: options file '$file' not found" >&2; exit 2; }
  JOB_OPTIONS=()
  while IFS= read -r line || [[ -n "$line" ]]; do
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    [[ -z "$line" || "$line" == \#* ]] && continue
    name="${line%%=*}"
    for arg in "$@"; do
      [[ "${arg%%=*}" == "$name" ]] && continue 2
    done
    JOB_OPTIONS+=("$line")
  done < "$file"
}
