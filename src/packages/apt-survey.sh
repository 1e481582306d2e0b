# The packages part of a survey, after apt-hold.sh (apt-scripts.ts puts the call's data
# after it; apt.ts reads its answer). apt's database and lists are read, and what an install
# would do is asked of apt, which changes nothing. Its every line is `P ...` or `| <a line
# apt wrote>`. Names and versions are words berth checked against Debian's grammar, each
# split out of a list on purpose (SC2086); dpkg-query's format is its own, not the shell's
# (SC2016); apt-hold.sh sets apt_kept (SC2154).
# shellcheck disable=SC2086,SC2016,SC2154

# apt_survey NAME... -- SPEC...: `P apt <now> <lists' mtime|never|->` (`P apt - -` when every
# SPEC is as it asks: see apt_lacking), `P starts-held <kept|->` when
# berth's policy-rc.d is there, a `P status <name> <status> <version>` a NAME, apt-cache
# policy's lines (only when something is not installed as asked), then `P policy-end`.
# With no apt, `P none <the package manager found, or ->`.
apt_survey() {
  apt_n=
  while [ "$#" -gt 0 ] && [ "$1" != -- ]; do apt_n="$apt_n $1"; shift; done
  shift
  if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
    apt_has=
    f=-
    for m in dnf yum zypper apk pacman; do
      if command -v $m >/dev/null 2>&1; then f=$m; break; fi
    done
    printf 'P none %s\n' "$f"
    return 0
  fi
  apt_has=1
  apt_l=$(apt_lists)
  set -f
  # One dpkg-query answers for every package: each program started costs the far side a
  # few milliseconds, apt's each a few tens.
  apt_q=$(dpkg-query -W -f='${Package} ${db:Status-Status} ${Version}\n' apt $apt_n 2>/dev/null)
  # The lists (their age, what they offer) matter only to what is to be installed: of a
  # package installed as asked, only its version.
  apt_lacking "$@"
  if [ -n "$apt_a" ]; then
    printf 'P apt %s %s\n' "$(date +%s)" "$apt_l"
  else
    printf 'P apt - -\n'
  fi
  # berth's hold on service starts, which a killed install left (apt-hold.sh).
  if apt_ours; then
    if [ -e "$apt_kept" ]; then printf 'P starts-held kept\n'; else printf 'P starts-held -\n'; fi
  fi
  for n in $apt_n; do apt_status "$n"; printf 'P status %s %s\n' "$n" "$apt_s"; done
  if [ -n "$apt_a" ]; then apt-cache policy $apt_n 2>/dev/null | sed 's/^/| /'; fi
  printf 'P policy-end\n'
  # apt before 2.9 says what an install would do in lines apt.ts reads (-V), without
  # simulating dpkg's every step as -s does (a third of the time); a later apt words its
  # lists anew, and is simulated.
  apt_status apt
  case ${apt_s#installed } in [01].*|2.[0-8]|2.[0-8].*) apt_v=1 ;; *) apt_v= ;; esac
  set +f
}

# apt_lists: when the package lists were last fetched (their directory's mtime), or `never`
# when it holds no list of packages.
apt_lists() {
  for f in /var/lib/apt/lists/*_Packages*; do
    if [ -e "$f" ]; then stat -c %Y /var/lib/apt/lists 2>/dev/null || echo -; return 0; fi
  done
  echo never
}

# apt_status NAME: its status and version as dpkg-query said them, as apt_s.
apt_status() {
  apt_s='unknown -'
  set -f; IFS='
'
  for e in $apt_q; do case $e in "$1 "*) apt_s=${e#"$1 "}; break ;; esac; done
  unset IFS; set +f
}

# apt_lacking SPEC...: those not as they ask, as apt_a: `name=version` not installed at
# it, `name` not installed, `name-` (removed) there but for its configuration, `name_`
# (purged) there at all.
apt_lacking() {
  apt_a=
  for w in "$@"; do
    case $w in
      *=*) apt_status "${w%%=*}" ;;
      *-) apt_status "${w%-}" ;;
      *_) apt_status "${w%_}" ;;
      *) apt_status "$w" ;;
    esac
    case $w in
      *=*) [ "$apt_s" = "installed ${w#*=}" ] || apt_a="$apt_a $w" ;;
      *-) case $apt_s in "not-installed "*|"config-files "*|"unknown "*) ;; *) apt_a="$apt_a $w" ;; esac ;;
      *_) case $apt_s in "not-installed "*|"unknown "*) ;; *) apt_a="$apt_a $w" ;; esac ;;
      *) case $apt_s in "installed "*) ;; *) apt_a="$apt_a $w" ;; esac ;;
    esac
  done
}

# apt_sim MODULE SPEC...: `P sim <module>`, what apt says it would do to install what the
# module lacks, then (when it would) `P archives` and the Package, Version and SHA256 lines
# the lists give for each package it names, and `P sim-end <exit>`. --print-uris stops before anything is fetched or
# installed; --assume-no, were it asked. Nothing at all where there is no apt.
apt_sim() {
  [ -n "$apt_has" ] || return 0
  m=$1; shift
  apt_lacking "$@"
  printf 'P sim %s\n' "$m"
  c=0
  if [ -n "$apt_a" ]; then
    set -f
    # A module that removes a package is simulated (Remv, Purg), removals allowed: apt.ts
    # holds them to those it names absent. A purge is apt-get purge's, after the rest.
    apt_i='' apt_p='' apt_r=''
    for w in $apt_a; do
      case $w in
        *_) apt_p="$apt_p ${w%_}" apt_r=1 ;;
        *-) apt_i="$apt_i $w" apt_r=1 ;;
        *) apt_i="$apt_i $w" ;;
      esac
    done
    if [ -n "$apt_r" ]; then
      o=
      if [ -n "$apt_i" ]; then
        o=$(apt-get -s -o Debug::NoLocking=1 -q --allow-downgrades install $apt_i 2>&1) || c=$?
      fi
      if [ "$c" = 0 ] && [ -n "$apt_p" ]; then
        p=$(apt-get -s -o Debug::NoLocking=1 -q purge $apt_p 2>&1) || c=$?
        o="$o
$p"
      fi
    elif [ -n "$apt_v" ]; then
      o=$(apt-get -V --print-uris --assume-no -o Debug::NoLocking=1 -q --allow-downgrades --no-remove install $apt_a 2>&1) || c=$?
    else
      o=$(apt-get -s -o Debug::NoLocking=1 -q --allow-downgrades --no-remove install $apt_a 2>&1) || c=$?
    fi
    printf '%s\n' "$o" | sed 's/^/| /'
    if [ "$c" = 0 ]; then
      # The archives' hashes the lists give for the packages it would install, every
      # version of each (apt.ts keeps those of the versions installed).
      apt_w=$(printf '%s\n' "$o" |
        sed -n -e 's/^Inst \([a-z0-9][^ ]*\) .*/\1/p' -e 's/^   *\([a-z0-9][^ ()]*\) (.*/\1/p')
      printf 'P archives\n'
      if [ -n "$apt_w" ]; then
        apt-cache show $apt_w 2>/dev/null | grep -E '^(Package|Version|SHA256): ' | sed 's/^/| /'
      fi
    fi
    set +f
  fi
  printf 'P sim-end %s\n' "$c"
}
