#!/bin/sh
# The role `app`, whose password berth keeps in the postgres user's .pgpass: made once, its
# password set again from that file at each setup (berth runs setup when a file or secret
# of the module changed). The password reaches psql on its standard input, never on a
# command line another user could read.
set -eu
pg_ctlcluster 15 main status >/dev/null 2>&1 || pg_ctlcluster 15 main start
password=$(sed -n 's/^localhost:5432:\*:app:\(.*\)$/\1/p' /var/lib/postgresql/.pgpass)
if [ -z "$password" ]; then
  echo "setup: /var/lib/postgresql/.pgpass holds no password for app" >&2
  exit 1
fi
# As an SQL string: each ' doubled.
quoted=$(printf '%s' "$password" | sed "s/'/''/g")
printf '%s\n' \
  "SELECT 'CREATE ROLE app LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'app') \\gexec" \
  "ALTER ROLE app PASSWORD '$quoted';" |
  runuser -u postgres -- psql -q -X -v ON_ERROR_STOP=1 -d postgres
