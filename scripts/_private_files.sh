# shellcheck shell=bash
# Sourced by scripts/start: the settings file (.env, with the secret key) and the SQLite
# files are readable by their owner only, and DEBUG pages are never served to other
# machines.

# The checkout's settings file (ENV_FILE, default .env; kept out of git), owner-only, with
# a SECRET_KEY made once: the settings read it (scheduler_site/dotenv.py), so commands
# typed later in another terminal (scripts/manage ...) use the same key. The key of an
# older checkout's .secret_key is kept. ENV_FILE set but empty: no file.
ensure_env_file() {
  local file="${ENV_FILE-.env}" key
  if [ -z "$file" ]; then return 0; fi
  if [ ! -e "$file" ]; then
    (umask 077 && {
      echo "# This checkout's settings, read by scheduler_site/settings.py for every variable"
      echo "# the environment does not set (NAME=value lines). Made by scripts/start; keep it"
      echo "# out of git and readable by you only. Add options here (DATABASE_URL=..., ...)."
    } > "$file")
  fi
  chmod 600 "$file"
  if ! grep -Eq '^[[:space:]]*(export[[:space:]]+)?SECRET_KEY=' "$file"; then
    if [ -s .secret_key ]; then
      key="$(cat .secret_key)"
    else
      key="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')"
    fi
    # On a line of its own, even after a last line without its newline.
    if [ -s "$file" ] && [ -n "$(tail -c 1 "$file")" ]; then echo >> "$file"; fi
    printf 'SECRET_KEY=%s\n' "$key" >> "$file"
  fi
}

# The default SQLite database, owner-only. (SQLite gives its -wal and -shm files the
# database file's mode; a new database is made under umask 077, see private_migrate.)
protect_sqlite_files() {
  local file
  for file in db.sqlite3 db.sqlite3-wal db.sqlite3-shm db.sqlite3-journal; do
    if [ -e "$file" ]; then chmod 600 "$file"; fi
  done
}

# migrate, creating any new database file owner-only.
private_migrate() {
  protect_sqlite_files
  (umask 077 && python manage.py migrate --no-input -v 0)
  protect_sqlite_files
}

# Whether ADDR (runserver's [host:]port) listens on this machine only.
is_loopback_addr() {
  local addr="$1" host
  case "$addr" in
    *:*) host="${addr%:*}" ;;
    *) return 0 ;;  # a port only: runserver listens on 127.0.0.1
  esac
  case "$host" in
    127.*|localhost|"[::1]") return 0 ;;
    *) return 1 ;;
  esac
}

# Refuse DEBUG on with an address other machines can reach: debug pages show settings,
# code and the request.
refuse_public_debug() {
  local addr="$1" debug
  debug="$(printf '%s' "${DEBUG:-}" | tr '[:upper:]' '[:lower:]' | tr -d '[:space:]')"
  case "$debug" in
    1|true|yes|on) ;;
    *) return 0 ;;
  esac
  if ! is_loopback_addr "$addr"; then
    echo "scripts/start: DEBUG is on and ADDR=$addr is reachable from other machines;" \
      "debug pages would show them settings and code. Use ADDR=127.0.0.1:8000, or set" \
      "DEBUG=false and ALLOWED_HOSTS (docs/deployment.md)." >&2
    return 1
  fi
}
