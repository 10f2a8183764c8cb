#!/bin/bash
# Runs last in an environment build, as the box user in /workspace: moves what the setup commands
# made inside the repository (untracked or ignored paths: node_modules, *.egg-info, built
# extensions) to /opt/drydock/env/prepared, and writes what a session's box lays over its copy of
# the repository:
#   links.tar  symlinks back to each prepared path. A prepared directory becomes a real directory
#              of links to its entries, so the directory itself stays writable (caches such as
#              node_modules/.vite can be created) while the entries stay read-only and shared.
#   exclude    lines for .git/info/exclude, so the links never appear in a diff.
set -euo pipefail
cd /workspace
env_dir=/opt/drydock/env
prepared=$env_dir/prepared
links=$(mktemp -d)
: >"$env_dir/exclude"
: >"$env_dir/prepared.list"

changed=$(git diff --name-only)
if [ -n "$changed" ]; then
  echo "drydock: setup changed tracked files; sessions get the repository's own version of:" >&2
  printf '  %s\n' $changed | head -20 >&2
fi

escape() { printf '%s' "$1" | sed 's/[][*?\\!#]/\\&/g'; }

count=0
while IFS= read -r -d '' entry; do
  path=${entry%/}
  case "/$path/" in
    */__pycache__/* | */.pytest_cache/* | */.mypy_cache/* | */.ruff_cache/* | /.git/*) continue ;;
  esac
  mkdir -p "$prepared/$(dirname "$path")"
  mv "$path" "$prepared/$path"
  printf '/%s\n' "$(escape "$path")" >>"$env_dir/exclude"
  printf '%s\n' "$path" >>"$env_dir/prepared.list"
  if [ -d "$prepared/$path" ] && [ ! -L "$prepared/$path" ]; then
    mkdir -p "$links/$path"
    for child in "$prepared/$path"/* "$prepared/$path"/.[!.]* "$prepared/$path"/..?*; do
      [ -e "$child" ] || [ -L "$child" ] || continue
      ln -s "$child" "$links/$path/${child##*/}"
    done
  else
    mkdir -p "$links/$(dirname "$path")"
    ln -s "$prepared/$path" "$links/$path"
  fi
  files=$(find "$prepared/$path" | wc -l)
  echo "drydock: prepared $path ($files files)" >&2
  count=$((count + 1))
done < <(git ls-files -z --others --directory)

find "$links" -type d -exec chmod 0755 {} +
(cd "$links" && find . -mindepth 1 -maxdepth 1 -printf '%P\0' | tar -c -f "$env_dir/links.tar" --null -T -)
rm -rf "$links"
echo "drydock: $count prepared path(s)" >&2
