# An install of exactly the packages given, as root, after apt-hold.sh (apt-scripts.ts sets
# the call's data before them: WAIT, the seconds apt waits for its lock; HOLD, 1 when no
# service is to start meanwhile; and the positional parameters, each `name=version`, or
# `name-` to remove and `name_` to purge, which alone let apt remove anything, a purge
# with apt-get purge after the rest). A
# package's own configuration file never replaces one that is there (berth's, written
# before or after: --force-confold). With HOLD, berth's policy-rc.d denies every start for
# the install's length; one the node had is moved aside and put back after, as is one a
# killed install left aside. A dpkg that a killed install left half-way is carried on
# first (`dpkg --configure -a`, as apt asks). Its last line is `berth-apt-exit <apt's exit>`.
# The variables are set before this text (SC2154).
# shellcheck disable=SC2154
LC_ALL=C DEBIAN_FRONTEND=noninteractive; export LC_ALL DEBIAN_FRONTEND
# apt_no WORDS: nothing installed, said as apt says it.
apt_no() { echo "E: $1"; printf 'berth-apt-exit 100\n'; exit 100; }
if [ -n "$HOLD" ]; then
  apt_back
  if [ -e "$apt_policy" ]; then
    if [ -e "$apt_kept" ]; then apt_no "$apt_kept is in the way of the node's own $apt_policy"; fi
    mv "$apt_policy" "$apt_kept" || apt_no "the node's own $apt_policy could not be moved aside"
  fi
  trap apt_back EXIT
  trap 'exit 130' HUP INT TERM
  if ! (set -C; printf '#!/bin/sh\n%s\nexit 101\n' "$apt_mark" > "$apt_policy") ||
    ! chmod 755 "$apt_policy"; then
    apt_no "$apt_policy could not be put in place"
  fi
fi
c=0
if [ -n "$(ls -A /var/lib/dpkg/updates 2>/dev/null)" ]; then
  dpkg --force-confold --configure -a 2>&1 || c=$?
fi
# What to install or remove (apt_i), and what to purge (apt_p), which apt-get install does not
# take: words berth checked against Debian's grammar, split out of their lists (SC2086).
apt_i='' apt_p='' apt_r=--no-remove
for a in "$@"; do
  case $a in
    *_) apt_p="$apt_p ${a%_}" ;;
    *-) apt_i="$apt_i $a" apt_r= ;;
    *) apt_i="$apt_i $a" ;;
  esac
done
set -f
# shellcheck disable=SC2086
if [ "$c" = 0 ] && [ -n "$apt_i" ]; then
  apt-get install -y -q --allow-downgrades $apt_r -o DPkg::Lock::Timeout="$WAIT" \
    -o Dpkg::Options::=--force-confold $apt_i 2>&1
  c=$?
fi
# shellcheck disable=SC2086
if [ "$c" = 0 ] && [ -n "$apt_p" ]; then
  apt-get purge -y -q -o DPkg::Lock::Timeout="$WAIT" $apt_p 2>&1
  c=$?
fi
set +f
if [ -n "$HOLD" ]; then apt_back; trap - EXIT; fi
# The last line: apt's exit. An answer without it was cut short (apt.ts).
printf 'berth-apt-exit %s\n' "$c"
exit "$c"
