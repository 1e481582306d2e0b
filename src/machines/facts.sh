# H: the node's facts (facts.ts), for a survey that asks them: `fact <name> <text>` lines, a
# fact the machine cannot tell left out. Read by the shell itself where it can: a program
# costs the far side a process.
# Words are split on purpose (SC2086, SC2046); `a && b || c` means c when either fails (SC2015).
# shellcheck disable=SC2086,SC2046,SC2015
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
  K
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
# K: the address the default route leaves from. From the kernel's tables, read by the
# shell: the default route's interface and gateway (/proc/net/route, little-endian hex),
# the subnet of that interface that holds the gateway, and the local address in it
# (/proc/net/fib_trie). Else, as an IPv6-only host has it, what `ip route get` says.
K() {
  fa='' fd='' fg=0 fn=0 fm=-1
  if [ -r /proc/net/route ] && [ -r /proc/net/fib_trie ]; then
    while read -r fj fe fw _ _ _ _ fk _; do
      # What sh's arithmetic reads is hex, or it is not read: a word it cannot read ends sh.
      case $fe$fw$fk in *[!0-9A-Fa-f]*|'') continue ;; esac
      if [ "$fe" = 00000000 ] && [ "$fk" = 00000000 ]; then fd=$fj fg=$((0x$fw)); break; fi
    done </proc/net/route
    if [ -n "$fd" ]; then
      while read -r fj fe fw _ _ _ _ fk _; do
        case $fe$fw$fk in *[!0-9A-Fa-f]*|'') continue ;; esac
        [ "$fj" = "$fd" ] && [ "$fw" = 00000000 ] && [ "$fk" != 00000000 ] || continue
        if [ "$fg" = 0 ] || [ $((fg & 0x$fk)) = $((0x$fe)) ]; then fn=$((0x$fe)) fm=$((0x$fk)); break; fi
      done </proc/net/route
    fi
    if [ "$fm" != -1 ]; then
      fl=''
      while read -r fx fy _; do
        case $fx in
          '|--') case $fy in *[!0-9.]*|'') fl='' ;; *) fl=$fy ;; esac ;;
          /32)
            [ "$fy" = host ] && [ -n "$fl" ] || continue
            IFS=.; set -f; set -- $fl; set +f; unset IFS
            if [ $# = 4 ] && [ $(((($4 << 24) | ($3 << 16) | ($2 << 8) | $1) & fm)) = "$fn" ]; then
              fa=$fl
              break
            fi ;;
        esac
      done </proc/net/fib_trie
    fi
  fi
  if [ -z "$fa" ]; then
    for fp in ip /usr/sbin/ip /sbin/ip; do command -v "$fp" >/dev/null 2>&1 && break; fp=''; done
    if [ -n "$fp" ]; then
      set -f
      set -- $("$fp" -o route get 1.0.0.0 2>/dev/null || "$fp" -o -6 route get 2000:: 2>/dev/null)
      set +f
      while [ $# -gt 1 ]; do
        if [ "$1" = src ]; then fa=$2; break; fi
        shift
      done
    fi
  fi
  [ -z "$fa" ] || printf 'fact address %s\n' "$fa"
}
