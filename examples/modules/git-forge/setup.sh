#!/bin/sh
# The forge's setup, idempotent, as root: what Debian's gitolite3 does at install only when
# given an admin key then (its user, its home, the rc link, the admin repository), the admin
# key from berth's value, and berth's gitolite.conf made live.
set -eu
U=gitolite3
H=/var/lib/gitolite3
B=/etc/gitolite3/berth
as() { runuser -u "$U" -- env -i HOME="$H" PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"; }

# One key on one line: gitolite would take a second line as a second admin key.
if [ "$(grep -c . "$B/admin.pub")" != 1 ] || ! ssh-keygen -l -f "$B/admin.pub" >/dev/null 2>&1; then
  echo "the value admin_key is not one ssh public key on one line (as in ~/.ssh/id_ed25519.pub)" >&2
  exit 1
fi

getent passwd "$U" >/dev/null || adduser --quiet --system --home "$H" --shell /bin/bash \
  --no-create-home --gecos 'git repository hosting' --group "$U"
# A password of "!" (adduser's) locks the account, and an sshd without PAM lets no key into a
# locked account: "*" is no password, and not locked.
[ "$(getent shadow "$U" | cut -d : -f 2)" = '*' ] || usermod -p '*' "$U"
install -d -o "$U" -g "$U" -m 0750 "$H"
# cgit runs as www-data: it reads the repositories through gitolite3's group (UMASK 0027 in
# the rc). A daemon takes its groups when it starts: a running fcgiwrap is stopped, the
# start or reload that ran this starts it again.
if ! id -nG www-data | tr ' ' '\n' | grep -qx "$U"; then
  adduser --quiet www-data "$U"
  service fcgiwrap stop >/dev/null 2>&1 || true
fi
[ "$(readlink "$H/.gitolite.rc" 2>/dev/null)" = /etc/gitolite3/gitolite.rc ] || ln -sfn /etc/gitolite3/gitolite.rc "$H/.gitolite.rc"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
chown "$U" "$T"
fresh=no
[ -d "$H/repositories/gitolite-admin.git" ] || fresh=yes

# gitolite names the admin after the key's file: admin.pub is "admin".
install -o "$U" -m 0644 "$B/admin.pub" "$T/admin.pub"
as sh -c "cd && gitolite setup -pk '$T/admin.pub'" >"$T/setup.log" 2>&1 || { cat "$T/setup.log" >&2; exit 1; }

# The first setup makes gitolite's example repository "testing", empty: berth's conf has no
# place for it, and cgit would list it.
if [ "$fresh" = yes ] && [ -z "$(as git --git-dir="$H/repositories/testing.git" for-each-ref 2>/dev/null)" ]; then
  rm -rf "$H/repositories/testing.git"
fi

# Repositories made from now on point HEAD at main, what git pushes by default nowadays, so
# an http clone checks it out. Only once the admin repository is there: gitolite 3.6.12
# compiles gitolite-admin's master branch and no other.
[ "$(as git config --global init.defaultBranch || true)" = main ] || as git config --global init.defaultBranch main

# berth's conf goes into gitolite-admin from the server side (gitolite push passes its
# access checks; the admin repository's hook compiles it) when it differs from the one there.
as sh -c "cd '$T' && git clone -q '$H/repositories/gitolite-admin.git' admin \
  && cp '$B/gitolite.conf' admin/conf/gitolite.conf && cd admin \
  && if [ -n \"\$(git status --porcelain)\" ]; then \
       git -c user.name=berth -c user.email=berth@localhost commit -qam 'berth: conf/gitolite.conf' \
       && gitolite push -q origin HEAD:refs/heads/master; fi" >"$T/conf.log" 2>&1 || { cat "$T/conf.log" >&2; exit 1; }
# A conf that does not compile is taken by the push all the same: gitolite says FATAL.
if grep -q FATAL "$T/conf.log"; then cat "$T/conf.log" >&2; exit 1; fi
