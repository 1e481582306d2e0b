#!/bin/sh
# Glewlwyd's setup, through its admin API; safe to run any number of times. berth runs it
# once the files and secrets beside it are in place, when one of them changed: so it first
# restarts the daemon (which reads its files at start only), then makes sure of
#   - the admin's password: admin.password (changed from the package's "password");
#   - the scope "berth", which becomes the tokens' aud;
#   - the OIDC plugin "oidc", signing with signing.key alone, under the kid berth names
#     (the key's RFC 7638 thumbprint); rewritten and reset only when it differs, so a
#     rotated key signs, and the removed one is no longer published, at once;
#   - the client berth-deployer: confidential, client_credentials, deployer.secret.
# A secret never goes in a command's arguments, which every user of the node can read.
set -eu
D=/etc/glewlwyd/berth
BASE='https://{{fact host}}:{{value port}}'
API="$BASE/api"
ISS="$BASE/api/oidc"
CLIENT=berth-deployer
SCOPE=berth
umask 077
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
J="$T/cookies"
# A request with the admin's session; s prints its status and leaves its body in $T/body.
c() { curl -sS --cacert "$D/tls.pem" -b "$J" -c "$J" -H 'Content-Type: application/json' "$@"; }
s() { c -o "$T/body" -w '%{http_code}' "$@"; }
fail() {
  echo "glewlwyd setup: $1${2:+: $(cat "$T/body")}" >&2
  exit 1
}

sh "$D/ctl.sh" restart

# The admin logs in with its password, else with the package's, which is then changed.
jq -n --rawfile p "$D/admin.password" '{username: "admin", password: ($p | rtrimstr("\n"))}' > "$T/login"
if [ "$(s -X POST --data-binary @"$T/login" "$API/auth/")" != 200 ]; then
  [ "$(s -X POST --data-binary '{"username":"admin","password":"password"}' "$API/auth/")" = 200 ] \
    || fail "the admin logs in neither with admin.password nor with the package's password"
  jq -n --rawfile p "$D/admin.password" \
    '{username: "admin", old_password: "password", password: ($p | rtrimstr("\n"))}' > "$T/change"
  [ "$(s -X PUT --data-binary @"$T/change" "$API/profile/password")" = 200 ] \
    || fail "the admin's password change was refused" body
  echo "admin password changed"
fi

if [ "$(s "$API/scope/$SCOPE")" = 404 ]; then
  jq -n --arg n "$SCOPE" \
    '{name: $n, display_name: $n, description: "berth api", password_required: false, scheme: {}}' \
    | s -X POST --data-binary @- "$API/scope/" | grep -qx 200 || fail "scope $SCOPE" body
  echo "scope $SCOPE added"
fi

# The signing key as a private JWK, with its alg and the kid berth names.
rnbyc -j -f "$D/signing.key" -n 0 -o "$T/key.jwks" -p /dev/null > /dev/null \
  || fail "signing.key is not a private key rnbyc reads"
jq -ce '.keys[0] | select(has("d"))
  | if .kty == "EC" and .crv == "P-256" then . + {alg: "ES256"}
    elif .kty == "RSA" then . + {alg: "RS256"} else empty end
  | . + {use: "sig"}' "$T/key.jwks" > "$T/key.jwk" \
  || fail "signing.key is neither an EC P-256 nor an RSA key"
jq -cjS 'if .kty == "EC" then {crv, kty, x, y} else {e, kty, n} end' "$T/key.jwk" > "$T/members"
KID=$(openssl dgst -sha256 -binary "$T/members" | base64 -w 0 | tr '+/' '-_' | tr -d '=')
jq -n --arg iss "$ISS" --arg kid "$KID" --slurpfile key "$T/key.jwk" '{
  "iss": $iss,
  "jwks-private": ({keys: [$key[0] + {kid: $kid}]} | tojson), "default-kid": $kid, "jwks-show": true,
  "access-token-duration": 3600, "refresh-token-duration": 1209600, "code-duration": 600,
  "refresh-token-rolling": false, "allow-non-oidc": true,
  "auth-type-code-enabled": false, "auth-type-token-enabled": false, "auth-type-none-enabled": false,
  "auth-type-password-enabled": false, "auth-type-client-enabled": true,
  "auth-type-device-enabled": false, "auth-type-refresh-enabled": false,
  "subject-type": "public", "scope": [],
  "session-cookie-name": "GLEWLWYD_OIDC_SESSION_ID", "session-cookie-expiration": 2592000
}' > "$T/params"
if [ "$(s "$API/mod/plugin/oidc")" = 404 ]; then
  jq -n --slurpfile p "$T/params" \
    '{module: "oidc", name: "oidc", display_name: "OpenID Connect", parameters: $p[0], order_rank: 0}' \
    | s -X POST --data-binary @- "$API/mod/plugin/" | grep -qx 200 || fail "plugin oidc" body
  echo "plugin oidc added, signing with kid $KID"
# Glewlwyd adds "name" to the parameters it keeps: compared without it.
elif ! jq -e --slurpfile p "$T/params" '(.parameters | del(.name)) == ($p[0] | del(.name))' "$T/body" > /dev/null; then
  jq -n --slurpfile p "$T/params" '{display_name: "OpenID Connect", parameters: $p[0], order_rank: 0}' \
    | s -X PUT --data-binary @- "$API/mod/plugin/oidc" | grep -qx 200 || fail "plugin oidc" body
  # A running plugin loads its new keys only when reset; a bad key is said only here.
  [ "$(s -X PUT "$API/mod/plugin/oidc/reset")" = 200 ] || fail "plugin oidc reset" body
  echo "plugin oidc updated, signing with kid $KID"
fi

jq -n --arg id "$CLIENT" --arg scope "$SCOPE" --rawfile pw "$D/deployer.secret" '{
  client_id: $id, name: $id, description: "berth deployer", enabled: true, confidential: true,
  password: ($pw | rtrimstr("\n")), scope: [$scope],
  authorization_type: ["client_credentials"], token_endpoint_auth_method: ["client_secret_basic"],
  redirect_uri: []
}' > "$T/client"
if [ "$(s "$API/client/$CLIENT")" = 404 ]; then
  s -X POST --data-binary @"$T/client" "$API/client/" | grep -qx 200 || fail "client $CLIENT" body
  echo "client $CLIENT added"
else
  # Its secret cannot be read back: a token is asked with it, and the client rewritten if refused.
  code=$(printf 'user = "%s:%s"\n' "$CLIENT" "$(cat "$D/deployer.secret")" \
    | curl -sS -K - --cacert "$D/tls.pem" -o /dev/null -w '%{http_code}' \
      -d grant_type=client_credentials -d scope="$SCOPE" "$ISS/token")
  if [ "$code" != 200 ]; then
    s -X PUT --data-binary @"$T/client" "$API/client/$CLIENT" | grep -qx 200 || fail "client $CLIENT" body
    echo "client $CLIENT updated"
  fi
fi
