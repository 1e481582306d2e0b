# The walk both of the ssh machine's scripts open with (ssh-scripts.ts puts the call's data
# before it: NL, a newline, and the limits of limits.ts). A record is split into its words
# on purpose (SC2086); `a && b || c` means c when either fails (SC2015); `x= y=` empties
# (SC1007); the variables are set by eval, or read by the files that come after it
# (SC2154, SC2034).
# shellcheck disable=SC2086,SC2015,SC1007,SC2154,SC2034
# The walk, as systemd's chase() walks a path, the shell's working directory its directory
# handle. A record is what stat says of a name, not following it: `<raw mode in hex> <uid>
# <dev> <inode> <links> <size> <gid>`.
V='%f %u %d %i %h %s %g'
# T <directory's record> <entry's record>: whether only root could have put the entry under
# its name: the directory is root's and no other user may write it, or it is sticky and
# the entry is root's.
T() {
  set -- $1 $2
  [ "$2" = 0 ] && { [ $((0x$1 & 18)) = 0 ] || { [ $((0x$1 & 512)) != 0 ] && [ "$9" = 0 ]; }; }
}
# Z <record>: z, its type: d directory, l symbolic link, f regular file, o anything else.
Z() {
  case $((0x${1%% *} & 61440)) in 16384) z=d ;; 40960) z=l ;; 32768) z=f ;; *) z=o ;; esac
}
# I <record> <record>: whether both are of one file (the same device and inode).
I() {
  set -- $1 $2
  [ "$3 $4" = "${10} ${11}" ]
}
# w <path> <make>: makes the path the working directory, a name at a time: each name
# lstat-ed, a symbolic link followed only when only root could have placed it, a directory
# entered with cd -P and `.` checked to be the one lstat-ed (else a swap raced the walk).
# Once inside, a rename above changes nothing. The names only root could have placed are
# passed at once (one lstat of every prefix). With make 1, a missing directory is made.
# 0: in the path's directory, D its record. 1: not, W says why: `leaf` (the last name is
# not a directory: in its directory, D that one's record, E its own, c its name),
# `missing`, `notdir`, `link <uid> <where>`, `raced <where>`, `unreadable <reason>`.
C=
w() {
  if [ "$C" = "$1" ]; then return 0; fi
  C= W= wo=$1 wm=$2 wh=0
  cd / || { W='unreadable / cannot be entered'; return 1; }
  set -- /; wp=; wq=${wo#/}
  while [ -n "$wq" ]; do
    c=${wq%%/*}; wq=${wq#"$c"}; wq=${wq#/}; wp=$wp/$c
    [ -e "$wp" ] || [ -L "$wp" ] || break
    set -- "$@" "$wp"
  done
  wn=$# wj=0
  if ws=$(stat -c "$V" -- "$@" 2>/dev/null); then
    set -f; IFS=$NL
    for wl in $ws; do eval "wr$wj=\$wl"; wj=$((wj + 1)); done
    unset IFS; set +f
  fi
  if [ $wj = $wn ]; then
    D=$wr0 wk=1
    while [ $wk -lt $wn ]; do
      eval "E=\$wr$wk"; Z "$E"
      [ $z = d ] && T "$D" "$E" || break
      D=$E wk=$((wk + 1))
    done
    eval "L=\${$wk}"
    wf=; if [ $wk -lt $wn ]; then eval "wf=\$wr$wk"; fi
    cd -P -- "$L" 2>/dev/null || { W='unreadable permission denied'; return 1; }
    L=${L%/}
  else
    D=$(stat -c "$V" /) || { W='unreadable / cannot be looked at'; return 1; }
    L= wf=
  fi
  wq=${wo#"$L"}
  while [ -n "$wq" ]; do
    wq=${wq#/}; c=${wq%%/*}; wq=${wq#"$c"}
    case $c in ''|.) continue ;; esac
    if [ "$c" = .. ]; then
      cd -P .. && D=$(stat -c "$V" .) || { W="unreadable $L/.. cannot be entered"; return 1; }
      L=${L%/*}; continue
    fi
    # The first name past those taken at once was lstat-ed with them: a swap since shows at
    # the check of `.`.
    if [ -n "$wf" ]; then E=$wf wf=
    elif ! E=$(stat -c "$V" -- "./$c" 2>&1); then
      case $E in
        *'No such file or directory'*)
          if [ "$wm" != 1 ]; then W=missing; return 1; fi
          we=$(mkdir -- "./$c" 2>&1) || [ -e "./$c" ] || [ -L "./$c" ] || {
            W="unreadable cannot create directory $L/$c: ${we##*: }"; return 1; }
          E=$(stat -c "$V" -- "./$c") || { W="raced $L/$c"; return 1; } ;;
        *'Permission denied'*) W='unreadable permission denied'; return 1 ;;
        *) W="unreadable $(printf '%s' "${E##*: }" | tr '\n' ' ')"; return 1 ;;
      esac
    fi
    Z "$E"
    case $z in
      d)
        cd -P -- "./$c" 2>/dev/null || { W='unreadable permission denied'; return 1; }
        D=$(stat -c "$V" .) && I "$D" "$E" || { W="raced $L/$c"; return 1; }
        L=$L/$c ;;
      l)
        set -- $E
        [ "$2" = 0 ] && T "$D" "$E" || { W="link $2 $L/$c"; return 1; }
        wh=$((wh + 1))
        [ $wh -le "$MOST_LINKS" ] || { W='unreadable Too many levels of symbolic links'; return 1; }
        wt=$(readlink -- "./$c") || { W="raced $L/$c"; return 1; }
        case $wt in
          /*) cd / && D=$(stat -c "$V" /) || { W='unreadable / cannot be entered'; return 1; }
              L= wq=$wt$wq ;;
          *) wq=/$wt$wq ;;
        esac ;;
      *)
        if [ -n "$wq" ]; then W=notdir; else W=leaf; fi
        return 1 ;;
    esac
  done
  C=$wo
}
# N <uid>: the user's name, UNKNOWN when it has none: by the uid lstat-ed, as the link
# itself may be gone by now.
N() {
  set -- "$(getent passwd "$1" 2>/dev/null)"
  if [ -n "$1" ]; then printf '%s' "${1%%:*}"; else printf UNKNOWN; fi
}
# B <text>: the text in base64 on one line, for a name that may hold any byte.
B() { printf '%s' "$1" | base64 | tr -d '\n'; }
