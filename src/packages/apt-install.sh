# An install of exactly the packages given, as root (apt-scripts.ts sets the call's data
# before this: WAIT, the seconds apt waits for its lock; HOLD, 1 when no service is to start
# meanwhile; and the positional parameters, each `name=version`). A package's own
# configuration file never replaces one that is there (berth's, written before or after:
# --force-confold). With HOLD, /usr/sbin/policy-rc.d denies every start (exit 101) for the
# install's length; one the node had is moved aside and put back after, as is one a killed
# install left aside. The variables are set before this text (SC2154).
# shellcheck disable=SC2154
LC_ALL=C DEBIAN_FRONTEND=noninteractive; export LC_ALL DEBIAN_FRONTEND
D=/usr/sbin/policy-rc.d K=/usr/sbin/policy-rc.d.berth-kept
M='# berth: no service starts while berth installs packages'
ours() { [ -f "$D" ] && grep -qxF "$M" "$D"; }
back() {
  if ours; then rm -f "$D"; fi
  if [ -e "$K" ] && [ ! -e "$D" ]; then mv "$K" "$D"; fi
}
if [ -n "$HOLD" ]; then
  back
  if [ -e "$D" ]; then
    if [ -e "$K" ]; then echo "E: $K is in the way of the node's own $D"; exit 100; fi
    mv "$D" "$K" || exit 100
  fi
  trap back EXIT
  trap 'exit 130' HUP INT TERM
  (set -C; printf '#!/bin/sh\n%s\nexit 101\n' "$M" > "$D") && chmod 755 "$D" || exit 100
fi
apt-get install -y -q --allow-downgrades --no-remove -o DPkg::Lock::Timeout="$WAIT" \
  -o Dpkg::Options::=--force-confold "$@" 2>&1
c=$?
if [ -n "$HOLD" ]; then back; trap - EXIT; fi
exit $c
