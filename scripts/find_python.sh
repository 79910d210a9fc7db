#!/usr/bin/env bash
# Print the path of the first working Python interpreter among the arguments, each a
# version ("3.12"), a command ("python3.12", "python3") or a path; exit 1 if none works.
# A version or a pythonX.Y command that is not on PATH (or whose pyenv shim is not active)
# is also looked up in pyenv's versions ($PYENV_ROOT, default ~/.pyenv), newest patch first.
#   scripts/find_python.sh 3.13 3.12 3.11   # -> /root/.pyenv/versions/3.13.0/bin/python3.13
root=${PYENV_ROOT:-$HOME/.pyenv}
for arg in "$@"; do
  case "$arg" in
    [0-9]*) version=$arg; command="python$arg" ;;
    python[0-9]*.*) version=${arg#python}; command=$arg ;;
    *) version=""; command=$arg ;;
  esac
  if command -v "$command" >/dev/null 2>&1 &&
      path=$("$command" -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -n "$path" ]; then
    echo "$path"; exit 0
  fi
  [ -n "$version" ] || continue
  for dir in $(ls -d "$root"/versions/"$version".* 2>/dev/null | sort -V -r); do
    if [ -x "$dir/bin/python$version" ] && "$dir/bin/python$version" -c '' 2>/dev/null; then
      echo "$dir/bin/python$version"; exit 0
    fi
  done
done
exit 1
