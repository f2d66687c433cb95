# shellcheck shell=bash
# Shared by scripts/start and scripts/test: make .venv once, install what is missing.
PYTHON="${PYTHON:-python3}"

ensure_venv() {
  local requirements="$1"
  if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
  fi
  # shellcheck disable=SC1091
  source .venv/bin/activate
  local stamp=".venv/.installed-$(basename "$requirements")"
  if [ ! -f "$stamp" ] || [ "$requirements" -nt "$stamp" ] || [ requirements.txt -nt "$stamp" ]; then
    python -m pip install --quiet --upgrade pip
    python -m pip install --quiet -r "$requirements"
    touch "$stamp"
  fi
}
