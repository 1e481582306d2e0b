# The batch's functions, after walk.sh (ssh-scripts.ts appends the changes, as data).
# Words are split on purpose (SC2086); `x= y=` empties (SC1007); the variables are set by
# eval, or by walk.sh (SC2154); `-ef`, which POSIX leaves out, is in every sh berth meets
# (dash, bash, busybox) (SC3013).
# shellcheck disable=SC2086,SC1007,SC2154,SC3013
u=$(umask)
P= G=0
# e <words>: a failure's words, on standard error: the last of them are the refusal's.
e() { printf '%s\n' "$*" >&2; }
# y <path>: the words of a walk to the path that did not end in its directory.
y() {
  case $W in
    link*)
      set -- $W
      e "berth-link $2 $(N "$2") $(B "${W#link * }")" ;;
    missing|notdir|leaf) e "$1: a name on the way is not a directory" ;;
    raced*) e "${W#raced }: it changed while berth walked to it; nothing was done there" ;;
    *) e "${W#unreadable }" ;;
  esac
}
# r: the staged files: their data synced, each renamed in its directory, walked to again
# (the name must still be the file berth opened, and so must the new name be after),
# then their file systems synced, which holds the directories.
r() {
  [ -n "$P" ] || return 0
  set --
  for i in $P; do eval "set -- \"\$@\" /proc/self/fd/\$o$i"; done
  { sync -- "$@" || sync; } 2>/dev/null
  set --; N= K=0
  for i in $P; do
    eval "f=\$f$i d=\$d$i t=\$t$i o=\$o$i"
    if [ $K = 0 ]; then
      if ! w "$d" 0; then
        y "$d"
      elif [ -L "./$t" ] || ! [ "./$t" -ef /proc/self/fd/$o ]; then
        e "$d/$t: the temporary file was replaced while berth wrote it"
      elif ! v=$(mv -fT -- "./$t" "./$f" 2>&1); then
        e "$d/$f: ${v##*: }"
      elif [ -L "./$f" ] || ! [ "./$f" -ef /proc/self/fd/$o ]; then
        e "$d/$f: it was replaced as berth renamed its file there"
      else
        N="$N $i"; set -- "$@" /proc/self/fd/$o; continue
      fi
      K=1
    fi
    if [ "$C" = "$d" ]; then rm -f -- "./$t"; fi
  done
  [ $# = 0 ] || sync -f -- "$@" 2>/dev/null || :
  for i in $P; do eval "o=\$o$i"; eval "exec $o>&-"; done
  P= G=0
  for i in $N; do printf 'done %s\n' "$i"; done
  [ $K = 0 ] || exit 1
}
# x: a change failed: the files staged before it take their names, then the end.
x() { r; exit 1; }
# m <index> <path> <owner> <mode>: a directory, after the files staged before it: walked
# to (made where missing), then its owner and mode set on `.`, the directory walked to.
m() {
  r
  w "$2" 1 || { y "$2"; x; }
  if [ -n "$3" ] && ! v=$(chown -- "$3" . 2>&1); then e "$2: ${v##*: }"; x; fi
  if [ -n "$4" ] && ! v=$(chmod -- "$4" . 2>&1); then e "$2: ${v##*: }"; x; fi
  printf 'done %s\n' "$1"
}
# s <index> <path> <temporary name> <owner> <mode>: a file's data, from stdin, staged beside
# it: in its directory walked to, a new temporary file opened on a descriptor (noclobber,
# umask 077), written, and given its owner and mode through /proc/self/fd: the file opened,
# never a name looked up again. Seven are staged at most (descriptors 3 to 9).
s() {
  [ $G -lt 7 ] || r
  d=${2%/*}; d=${d:-/}; n=${2##*/}
  w "$d" 1 || { y "$d"; x; }
  if [ -d "./$n" ] && [ ! -L "./$n" ]; then e "$2: Is a directory"; x; fi
  for g in ./."$n".*.tmp; do
    case ${g##*/} in ."$n".[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f].tmp) rm -f -- "$g" ;; esac
  done
  o=$((G + 3))
  umask 077
  if ! command eval "exec $o>\"./\$3\""; then umask "$u"; e "$d/$3: the temporary file could not be made"; x; fi
  umask "$u"
  if ! base64 -d >&$o; then v="$2: its data could not be written"
  elif [ -n "$4" ] && ! v=$(chown -- "$4" /proc/self/fd/$o 2>&1); then v="$2: ${v##*: }"
  elif [ "$5" != 0600 ] && ! v=$(chmod -- "$5" /proc/self/fd/$o 2>&1); then v="$2: ${v##*: }"
  else
    eval "f$1=\$n d$1=\$d t$1=\$3 o$1=\$o"
    P="$P $1" G=$((G + 1))
    return 0
  fi
  rm -f -- "./$3"; eval "exec $o>&-"; e "$v"; x
}
