# shellcheck shell=bash
# Shared by scripts/start and scripts/test: make the virtualenv once, install what is
# missing. PYTHON picks the interpreter, VENV the folder (default .venv).
PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"

ensure_venv() {
  local requirements="$1"
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
  fi
  # shellcheck disable=SC1090,SC1091
  source "$VENV/bin/activate"
  local stamp="$VENV/.installed-$(basename "$requirements")"
  if [ ! -f "$stamp" ] || [ "$requirements" -nt "$stamp" ] || [ requirements.txt -nt "$stamp" ]; then
    python -m pip install --quiet --upgrade pip
    python -m pip install --quiet -r "$requirements"
    touch "$stamp"
  fi
}
