#!/usr/bin/env bash
# Install Syllabot as systemd services, every step the README's systemd section lists:
#   sudo bash deploy/install-systemd.sh            # from a checkout (or: ... PATH-OR-WHEEL)
# then edit /opt/syllabot/.env (REDIS_URL, the bot tokens) and
#   sudo systemctl enable --now syllabot-worker syllabot-discord   # and/or syllabot-slack
#
# SYLLABOT_ROOT=/some/folder installs into that folder instead of / (a trial run: the user is added
# to its etc/passwd, nothing is started, and systemd-analyze checks the units); SYLLABOT_VENV_ARGS
# is passed to `python3 -m venv` (e.g. --system-site-packages). A trial run by a regular user does
# every step a regular user can and says which it skipped: adding the user and handing the files
# to it need root (useradd cannot write a user database otherwise, not even under the folder).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source="${1:-$here/..}"
root="${SYLLABOT_ROOT:-}"
home="$root/opt/syllabot"
units="$root/etc/systemd/system"
me="install-systemd.sh"

# System tools live in /usr/sbin and /sbin, which a regular user's PATH (and sudo's, on some
# systems) lacks: look there too, and name the one missing rather than fail half-way.
tool() {
  local name="$1" dir
  if command -v "$name" >/dev/null 2>&1; then
    command -v "$name"
    return 0
  fi
  for dir in /usr/local/sbin /usr/sbin /sbin; do
    if [ -x "$dir/$name" ]; then
      echo "$dir/$name"
      return 0
    fi
  done
  echo "$me: needs $name ($2), found neither on PATH nor in /usr/local/sbin, /usr/sbin or /sbin" >&2
  return 1
}

privileged=0
[ "$(id -u)" = 0 ] && privileged=1
if [ -z "$root" ] && [ "$privileged" = 0 ]; then
  echo "$me: needs root (sudo bash deploy/install-systemd.sh): it adds the syllabot user and writes /opt/syllabot and /etc/systemd/system; SYLLABOT_ROOT=/tmp/trial runs it into a folder" >&2
  exit 1
fi
if [ "$privileged" = 1 ]; then
  useradd="$(tool useradd "the passwd package")"
fi
if [ -z "$root" ]; then
  systemctl="$(tool systemctl "systemd")"
else
  analyze="$(tool systemd-analyze "systemd, to check the units")"
fi

# 1. A system user that owns the installation and runs the services (no login, no shell).
owner=""
if grep -q '^syllabot:' "${root:-}/etc/passwd" 2>/dev/null; then
  owner="$(awk -F: '$1 == "syllabot" { print $3 ":" $4 }' "${root:-}/etc/passwd")"
elif [ "$privileged" = 1 ]; then
  mkdir -p "$root/etc"
  "$useradd" ${root:+--prefix "$root"} --system --user-group --home-dir /opt/syllabot \
    --shell /usr/sbin/nologin syllabot
  owner="$(awk -F: '$1 == "syllabot" { print $3 ":" $4 }' "${root:-}/etc/passwd")"
else
  echo "skipped (needs root): adding the system user syllabot (useradd)"
fi

# 2. The virtual environment with Syllabot in it.
install -d -m 755 "$home"
python3 -m venv ${SYLLABOT_VENV_ARGS:-} "$home/venv"
"$home/venv/bin/pip" install --quiet --disable-pip-version-check "$source"

# 3. Settings: a private copy of the example, kept if one is already there.
if [ ! -f "$home/.env" ]; then
  install -m 600 "$here/.env.example" "$home/.env"
fi
if [ "$privileged" = 1 ]; then
  chown -R "$owner" "$home"
else
  echo "skipped (needs root): handing $home to the syllabot user (chown)"
fi

# 4. The units, and systemd told about them.
install -d -m 755 "$units"
install -m 644 "$here"/syllabot-*.service "$units/"
if [ -z "$root" ]; then
  "$systemctl" daemon-reload
  echo "installed; edit /opt/syllabot/.env, then: systemctl enable --now syllabot-worker (and a bot's unit)"
else
  # A trial run: check each unit as systemd would, with its paths moved under the folder.
  for unit in "$units"/syllabot-*.service; do
    sed "s#/opt/syllabot#$home#g; /^User=/d" "$unit" > "$root/$(basename "$unit")"
    "$analyze" verify "$root/$(basename "$unit")"
  done
  echo "installed under $root (trial: nothing started)"
fi
