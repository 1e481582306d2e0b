# H: the node's facts (facts.ts), for a survey that asks them: `fact <name> <text>` lines, a
# fact the machine cannot tell left out. Read by the shell itself where it can: a program
# costs the far side a process.
# Words are split on purpose (SC2086, SC2046).
# shellcheck disable=SC2086,SC2046
H() {
  fh=''
  if [ -r /proc/sys/kernel/hostname ]; then read -r fh </proc/sys/kernel/hostname || :; fi
  [ -n "$fh" ] || fh=$(uname -n 2>/dev/null)
  if [ -n "$fh" ]; then
    printf 'fact hostname %s\n' "$fh"
    # The canonical name the resolver gives the hostname, as `hostname -f` says it: the
    # hosts file's line that names it, else getent's answer, else the hostname itself.
    ff=''
    if [ -r /etc/hosts ]; then
      while read -r fa fn fr; do
        case $fa in ''|'#'*) continue ;; esac
        for fx in $fn $fr; do
          case $fx in '#'*) break ;; esac
          if [ "$fx" = "$fh" ]; then ff=$fn; break 2; fi
        done
      done </etc/hosts
    fi
    if [ -z "$ff" ] && command -v getent >/dev/null 2>&1; then
      set -f; set -- $(getent hosts "$fh" 2>/dev/null); set +f
      ff=${2-}
    fi
    printf 'fact fqdn %s\n' "${ff:-$fh}"
  fi
  # The address the default route leaves from, as the kernel chooses it.
  for fp in ip /usr/sbin/ip /sbin/ip; do command -v "$fp" >/dev/null 2>&1 && break; fp=''; done
  if [ -n "$fp" ]; then
    set -f
    set -- $("$fp" -o route get 1.0.0.0 2>/dev/null || "$fp" -o -6 route get 2000:: 2>/dev/null)
    set +f
    while [ $# -gt 1 ]; do
      if [ "$1" = src ]; then printf 'fact address %s\n' "$2"; break; fi
      shift
    done
  fi
  if [ -r /etc/os-release ]; then
    while IFS='=' read -r fk fv; do
      if [ "$fk" = VERSION_CODENAME ]; then
        fv=${fv#[\"\']}; fv=${fv%[\"\']}
        [ -n "$fv" ] && printf 'fact codename %s\n' "$fv"
        break
      fi
    done </etc/os-release
  fi
  fm=''
  if [ -r /proc/sys/kernel/arch ]; then read -r fm </proc/sys/kernel/arch || :; fi
  [ -n "$fm" ] || fm=$(uname -m 2>/dev/null)
  [ -z "$fm" ] || printf 'fact arch %s\n' "$fm"
}
