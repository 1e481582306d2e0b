# The survey's functions, after walk.sh (ssh-scripts.ts appends the paths asked, as data).
# A record is split into its words on purpose (SC2086); `a && b || c` means c when either
# fails (SC2015); the variables are set by eval, or by walk.sh (SC2154).
# shellcheck disable=SC2086,SC2015,SC2154
# h <index> <what> <record> [empty]: a path's line, as parseSurvey reads it.
h() {
  set -- "$1" "$2" $3 "$4"
  printf '%s %s %s %s %s %s%s\n' "$1" "$2" "$3" "$8" "$4" "$9" "${10:+ ${10}}"
}
# j <index> <uid> <hard 0|1> <where>: a link berth does not follow, its owner named.
j() {
  printf '%s link %s %s %s %s\n' "$1" "$2" "$3" \
    "$(N "$2")" "$(B "$4")"
}
# Q <index> <read> <path> <record>: a path all of whose names only root could have placed.
Q() {
  Z "$4"
  case $z in
    d)
      if [ -r "$3" ] && [ -x "$3" ]; then
        e=1
        for x in "$3"/* "$3"/.[!.]* "$3"/..?*; do
          if [ -e "$x" ] || [ -L "$x" ]; then e=0; break; fi
        done
        h "$1" dir "$4" $e
      else
        printf '%s unreadable permission denied\n' "$1"
      fi ;;
    f)
      set -- "$1" "$2" "$3" "$4" $4
      if [ "$2" = 1 ] && [ "${10}" -le "$READ_LIMIT" ]; then
        h "$1" read "$4"
        if base64 -- "$3" 2>/dev/null; then printf '.\n'; else printf '\n!\n'; fi
      else
        h "$1" file "$4"
      fi ;;
    *) printf '%s other\n' "$1" ;;
  esac
}
# Y <index> <read> <path>: a path walked to (in a subshell), what it is there: a file read
# only from a descriptor whose file is the one lstat-ed, a regular file that is not a link.
Y() {
  if w "$3" 0; then
    e=1
    if [ -r . ] && [ -x . ]; then
      for x in ./* ./.[!.]* ./..?*; do
        if [ -e "$x" ] || [ -L "$x" ]; then e=0; break; fi
      done
      h "$1" dir "$D" $e
    else
      printf '%s unreadable permission denied\n' "$1"
    fi
    return 0
  fi
  case $W in
    leaf) ;;
    missing|notdir) printf '%s missing\n' "$1"; return 0 ;;
    link*) set -- "$1" $W; j "$1" "$3" 0 "${W#link * }"; return 0 ;;
    raced*) printf '%s unreadable it changed while berth looked at it\n' "$1"; return 0 ;;
    *) printf '%s unreadable %s\n' "$1" "${W#unreadable }"; return 0 ;;
  esac
  P "$1" "$2" "./$c" "$L/$c"
}
# P <index> <read> <name> <where>: what is not a directory, from its record E, in the
# directory of record D: a file with more names than one in a directory another user may
# write is a hard link; bytes are read only from a descriptor whose file is the one
# lstat-ed, still a regular file with one name.
P() {
  Z "$E"
  [ $z = f ] || { printf '%s other\n' "$1"; return 0; }
  set -- "$1" "$2" "$3" "$4" $E
  if [ "$9" != 1 ] && ! T "$D" "$E"; then j "$1" "$6" 1 "$4"; return 0; fi
  if [ "$2" != 1 ] || [ "${10}" -gt "$READ_LIMIT" ]; then h "$1" file "$E"; return 0; fi
  command exec 3<"$3" 2>/dev/null || { printf '%s unreadable permission denied\n' "$1"; return 0; }
  F=$(stat -L -c "$V" /proc/self/fd/3) && Z "$F" && [ $z = f ] && I "$E" "$F" || {
    exec 3<&-; printf '%s unreadable it changed while berth looked at it\n' "$1"; return 0; }
  set -- "$1" "$2" "$3" "$4" $F
  if [ "$9" != 1 ] && ! T "$D" "$F"; then exec 3<&-; j "$1" "$6" 1 "$4"; return 0; fi
  h "$1" read "$F"
  if base64 <&3 2>/dev/null; then printf '.\n'; else printf '\n!\n'; fi
  exec 3<&-
}
# u <index> <path>: a path asked or a directory above one: those there are lstat-ed at once.
X=
u() {
  eval "U$1=\$2"
  if [ -e "$2" ] || [ -L "$2" ]; then X="$X $1"; fi
}
# M: the one lstat of every name asked about (u), and how a path is sorted by them (k).
M() {
  set --
  for i in $X; do eval "set -- \"\$@\" \"\$U$i\""; done
  # A=1: every name was lstat-ed, one line each, so the paths may be sorted by them.
  A=0
  if [ $# -gt 0 ] && S=$(stat -c "$V" -- "$@" 2>/dev/null); then
    n=$#
    set -f; IFS=$NL; set -- $S; unset IFS; set +f
    if [ $# = $n ]; then
      A=1
      for i in $X; do eval "R$i=\$1"; shift; done
    fi
  fi
}
# k <index> <read> <prefix index>...: a path, by the records of its names: one whose names
# only root could have placed is answered from them; a name not there is missing when the
# directory it is looked up in may be searched; the rest are walked to (Y), in a subshell.
k() {
  i=$1 r=$2; shift 2
  eval "p=\${$#}"; eval "p=\$U$p"
  if [ ${#p} -ge "$PATH_MAX" ]; then printf '%s unreadable File name too long\n' "$i"; return 0; fi
  if [ $A = 1 ]; then
    eval "D=\$R$1"; a=$1; shift
    while [ $# -gt 0 ]; do
      eval "E=\${R$1-}"
      if [ -z "$E" ]; then
        eval "d=\$U$a c=\$U$1"; c=${c##*/}
        if [ -x "$d" ] && [ ${#c} -le "$NAME_MAX" ]; then printf '%s missing\n' "$i"; return 0; fi
        break
      fi
      Z "$E"
      if [ $# = 1 ]; then
        if T "$D" "$E"; then
          if [ $z != l ]; then Q "$i" "$r" "$p" "$E"; return 0; fi
        elif [ $z = l ]; then
          set -- $E; j "$i" "$2" 0 "$p"; return 0
        elif [ $z != d ]; then
          P "$i" "$r" "$p" "$p"; return 0
        fi
        break
      fi
      if [ $z = f ] || [ $z = o ]; then printf '%s missing\n' "$i"; return 0; fi
      [ $z = d ] && T "$D" "$E" || break
      D=$E a=$1; shift
    done
  fi
  (Y "$i" "$r" "$p")
}
# a <database> <name> <kind>: one name's id, when getent did not answer for them all.
a() {
  if command -v getent >/dev/null 2>&1; then i=$(getent "$1" "$2" 2>/dev/null | cut -d: -f3)
  else i=$(awk -F: -v n="$2" '$1 == n { print $3; exit }' "/etc/$1" 2>/dev/null); fi
  case $i in ''|*[!0-9]*) i=- ;; esac
  printf '%s %s %s\n' "$3" "$2" "$i"
}
# A <database> <kind> <name>...: each name's id, in order: from one getent, which answers
# one line a name in order when it knows them all (exit 0), else name by name.
A() {
  b=$1 n=$2; shift 2; k=$#
  if [ $k -gt 0 ] && command -v getent >/dev/null 2>&1 && G=$(getent "$b" "$@" 2>/dev/null); then
    set -f; IFS=$NL; set -- "$@" $G; unset IFS; set +f
    if [ $# = $((k * 2)) ]; then
      j=1
      while [ $j -le $k ]; do
        eval "v=\${$j} i=\${$((j + k))}"
        i=${i#*:}; i=${i#*:}; i=${i%%:*}
        case $i in ''|*[!0-9]*) i=- ;; esac
        printf '%s %s %s\n' "$n" "$v" "$i"
        j=$((j + 1))
      done
      return 0
    fi
  fi
  j=1
  while [ $j -le $k ]; do eval "a \"\$b\" \"\${$j}\" \"\$n\""; j=$((j + 1)); done
}
# O: s <uid> <gid>, the effective ids it runs as, read by the shell itself (no program).
# The reading stops at Gid, the line the kernel writes after Uid: sh reads a byte at a
# time, and some forty lines follow.
O() {
  if [ -r /proc/self/status ]; then
    ou='' og=''
    while read -r k _ e _; do
      case $k in Uid:) ou=$e ;; Gid:) og=$e; break ;; esac
    done </proc/self/status
    printf 's %s %s\n' "$ou" "$og"
  fi
}
