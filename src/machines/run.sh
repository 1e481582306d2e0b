# The hook's wrapper: HOOK is the hook's sh, HOOK_PATH its PATH, and the positional
# parameters berth's variables for it (NAME=value), set before this by runScript.
cd / || exit 1
command -v setsid >/dev/null 2>&1 || { echo "$NO_SETSID" >&2; exit 3; }
l=$(sed -n 's/^LANG=["'"'"']\{0,1\}\([^"'"'"']*\).*/\1/p' /etc/default/locale 2>/dev/null)
n=$(id -un 2>/dev/null)
case $n in ''|*[!A-Za-z0-9_.-]*) h=/ ;; *) eval "h=~$n" ;; esac
case $h in /*) ;; *) h=/ ;; esac
setsid env -i "PATH=$HOOK_PATH" "LANG=${l:-C.UTF-8}" "HOME=$h" "$@" sh -c "$HOOK" </dev/null 2>&1 &
pid=$!
printf 'berth-run %s\n' "$pid" >&2
wait "$pid"
printf 'berth-exit %s\n' "$?" >&2
