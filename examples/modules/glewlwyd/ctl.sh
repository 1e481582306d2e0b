#!/bin/sh
# Glewlwyd's control without systemd: ctl.sh start|restart|stop|check.
#   start    starts the daemon unless it runs, and waits until it serves its OIDC discovery
#   restart  stops it and starts it, waiting only for its API (setup.sh makes the OIDC plugin)
#   stop     stops it
#   check    passes while its discovery answers (the daemon up, its plugin loaded)
# The package's init script cannot start it (it names a config file that does not exist),
# and SIGHUP stops it rather than reloading: files are read at start, so a change restarts.
set -eu
D=/etc/glewlwyd/berth
PID=/run/glewlwyd-berth.pid
BASE='https://{{fact host}}:{{value port}}'
# tls.pem is the very certificate the daemon serves: curl (OpenSSL, partial chains allowed)
# trusts it alone, so no other process that took the port first is ever sent a password.
get() { curl -fsS --cacert "$D/tls.pem" -o /dev/null "$@"; }
# Waits at most 30 s for a URL to answer 2xx.
wait_for() {
  i=0
  until get "$1" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 60 ]; then
      echo "glewlwyd does not answer at $1; see /var/log/glewlwyd.log" >&2
      exit 1
    fi
    sleep 0.5
  done
}
daemon_start() {
  # A host that runs systemd has the package's unit enabled, on the same port.
  if [ -d /run/systemd/system ]; then systemctl disable --now glewlwyd.service 2>/dev/null || true; fi
  # It never forks: start-stop-daemon puts it in the background and keeps its pid.
  start-stop-daemon --start --quiet --oknodo --background --make-pidfile --pidfile "$PID" \
    --chuid glewlwyd --exec /usr/bin/glewlwyd -- --config-file="$D/glewlwyd.conf"
  wait_for "$BASE/config"
}
daemon_stop() {
  start-stop-daemon --stop --quiet --oknodo --pidfile "$PID" --exec /usr/bin/glewlwyd \
    --retry TERM/10/KILL/5 --remove-pidfile
}
case "${1:-}" in
start) daemon_start; wait_for "$BASE/api/oidc/.well-known/openid-configuration" ;;
restart) daemon_stop; daemon_start ;;
stop) daemon_stop ;;
check) get "$BASE/api/oidc/.well-known/openid-configuration" ;;
*) echo "usage: $0 start|restart|stop|check" >&2; exit 2 ;;
esac
