# shellcheck shell=bash
# Shared by scripts/start and scripts/test: make the virtualenv once, install what is
# missing. PYTHON picks the interpreter, VENV the folder (default .venv). What it is doing
# goes to stderr, so that a command's own output stays clean.
PYTHON="${PYTHON:-python3}"
# Bytecode caches are written (__pycache__/, ignored by git) even where the environment
# says not to: without them every test process and every scheduler, worker and manage.py
# a test starts compiles the project's modules again, and pytest rewrites every test
# module's asserts again (collecting the suite took 46 s without the caches, 10 s with).
unset PYTHONDONTWRITEBYTECODE
VENV="${VENV:-.venv}"

# A step of the installation, for the person watching the terminal.
step() {
  printf '==> %s\n' "$*" >&2
}

ensure_venv() {
  local requirements="$1"
  if [ ! -x "$VENV/bin/python" ]; then
    step "creating the virtualenv in $VENV"
    "$PYTHON" -m venv "$VENV"
  fi
  # shellcheck disable=SC1090,SC1091
  source "$VENV/bin/activate"
  local stamp="$VENV/.installed-$(basename "$requirements")"
  if [ ! -f "$stamp" ] || [ "$requirements" -nt "$stamp" ] || [ requirements.txt -nt "$stamp" ]; then
    step "installing $requirements into $VENV (about 30 s the first time, more on a slow network)"
    python -m pip install --quiet --upgrade pip || return 1
    python -m pip install --quiet -r "$requirements" || return 1
    touch "$stamp"
  fi
}
