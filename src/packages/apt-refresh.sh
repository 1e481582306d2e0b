# The package lists fetched anew (apt-get update), as root; apt-scripts.ts sets WAIT before
# this, the seconds apt waits for its lock (SC2154). Its last line is `berth-apt-exit <apt's
# exit>`.
# shellcheck disable=SC2154
LC_ALL=C DEBIAN_FRONTEND=noninteractive; export LC_ALL DEBIAN_FRONTEND
apt-get update -q -o DPkg::Lock::Timeout="$WAIT" 2>&1
printf 'berth-apt-exit %s\n' "$?"
