#!/usr/bin/env bash
# Install Syllabot as systemd services, every step the README's systemd section lists:
#   sudo bash deploy/install-systemd.sh            # from a checkout (or: ... PATH-OR-WHEEL)
# then edit /opt/syllabot/.env (REDIS_URL, the bot tokens) and
#   sudo systemctl enable --now syllabot-worker syllabot-discord   # and/or syllabot-slack
#
# SYLLABOT_ROOT=/some/folder installs into that folder instead of / (a trial run: the user is added
# to its etc/passwd, nothing is started, and systemd-analyze checks the units); SYLLABOT_VENV_ARGS
# is passed to `python3 -m venv` (e.g. --system-site-packages).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source="${1:-$here/..}"
root="${SYLLABOT_ROOT:-}"
home="$root/opt/syllabot"
units="$root/etc/systemd/system"

# 1. A system user that owns the installation and runs the services (no login, no shell).
if ! grep -q '^syllabot:' "${root:-}/etc/passwd" 2>/dev/null; then
  mkdir -p "$root/etc"
  useradd ${root:+--prefix "$root"} --system --user-group --home-dir /opt/syllabot \
    --shell /usr/sbin/nologin syllabot
fi
owner="$(awk -F: '$1 == "syllabot" { print $3 ":" $4 }' "${root:-}/etc/passwd")"

# 2. The virtual environment with Syllabot in it.
install -d -m 755 "$home"
python3 -m venv ${SYLLABOT_VENV_ARGS:-} "$home/venv"
"$home/venv/bin/pip" install --quiet --disable-pip-version-check "$source"

# 3. Settings: a private copy of the example, kept if one is already there.
if [ ! -f "$home/.env" ]; then
  install -m 600 "$here/.env.example" "$home/.env"
fi
chown -R "$owner" "$home"

# 4. The units, and systemd told about them.
install -d -m 755 "$units"
install -m 644 "$here"/syllabot-*.service "$units/"
if [ -z "$root" ]; then
  systemctl daemon-reload
  echo "installed; edit /opt/syllabot/.env, then: systemctl enable --now syllabot-worker (and a bot's unit)"
else
  # A trial run: check each unit as systemd would, with its paths moved under the folder.
  for unit in "$units"/syllabot-*.service; do
    sed "s#/opt/syllabot#$home#g; /^User=/d" "$unit" > "$root/$(basename "$unit")"
    systemd-analyze verify "$root/$(basename "$unit")"
  done
  echo "installed under $root (trial: nothing started)"
fi
