/**
 * The loop berth's own API waits for: on fresh fleet hosts, with Debian's real glewlwyd
 * from a local apt repository, `berth api --issuer glewlwyd@alpha` started first answers
 * that no identity provider runs; one converge brings Glewlwyd up from nothing over https
 * with a certificate from the state's CA; its client_credentials token is then accepted,
 * grants and audience still hold, a signing key rotated through berth is trusted at once
 * and the removed one refused; and a Glewlwyd an operator installed by hand is taken with
 * its key, nothing changed. Skipped, saying why, where the fleet cannot run or glewlwyd
 * cannot be fetched.
 *
 * berth.json reaches each host by its name (`ssh: 'alpha'`, through the fleet's ssh
 * config), which is its `host` fact and so its certificate's name: the state's CA certifies
 * no name a node tells of itself. The hosts' names are in their own /etc/hosts only: berth
 * api runs in a mount namespace of its own whose /etc/hosts names alpha too, as an
 * operator's DNS would; the test's curl is told the address with --resolve.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ApiProcess, httpAsk, startApi } from '../helpers/api-process.ts';
import { needs } from '../helpers/needs.ts';
import { digestOf, makeWorld, type Run, runBerth, type World } from '../helpers/world.ts';
import { buildAptRepository } from './apt-repository.ts';
import { type Fleet, fleetUnavailable, onHost } from './fleet.ts';
import { type PackageFleet, packageFleet } from './package-fleet.ts';

const EXAMPLES = resolve(import.meta.dirname, '../../examples/modules');
const PACKAGES = ['glewlwyd', 'dbconfig-sqlite3', 'curl', 'jq', 'rnbyc', 'openssl'];
const PORT = 4593;
const D = '/etc/glewlwyd/berth';
/** How long berth api waits before it asks the issuer for its keys again (issuer-authenticator.ts). */
const KEY_COOLDOWN_MS = 30_000;

const unavailable =
  fleetUnavailable() || needs('curl', 'curl') || needs('openssl', 'openssl') || undefined;
const repository = unavailable ? { skip: unavailable } : await buildAptRepository(PACKAGES);
const skip = typeof repository === 'string' ? false : repository.skip;

interface Curl {
  code: number;
  stdout: string;
  stderr: string;
}

function curl(args: string[], input?: string): Promise<Curl> {
  return new Promise((done) => {
    const child = execFile('curl', args, { timeout: 30_000 }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input ?? '');
  });
}

/** A JWT's header, decoded. */
const headerOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString('utf8'));

describe('Glewlwyd as berth brings it up, and berth api trusting it', { skip }, () => {
  let held: PackageFleet | undefined;
  let fleet: Fleet;
  let world: World;
  let runtime: string;
  let api: ApiProcess | undefined;
  let launcher: string[];
  let ca: string;
  /** The name berth.json reaches a host by (`ssh: 'alpha'`): its `host` fact, its certificate's name. */
  const nameOf = (host: string) => host;
  const issuer = `https://${nameOf('alpha')}:${PORT}/api/oidc`;
  const env = () => ({ XDG_RUNTIME_DIR: runtime, SSH_AUTH_SOCK: undefined });
  const berth = (...args: string[]): Promise<Run> =>
    runBerth(['--state', world.state, ...args], env());
  const on = (host: string, script: string) => onHost(fleet.host(host), script);
  const converge = async (node: string, ...options: string[]) => {
    const said = await berth('converge', node, ...options);
    assert.equal(said.code, 0, said.stderr);
    const done = await berth(
      'converge',
      node,
      ...options,
      '--yes',
      '--digest',
      digestOf(said.stdout),
    );
    assert.equal(done.code, 0, `${said.stdout}\n${done.stdout}\n${done.stderr}`);
    return { said, done };
  };
  /** curl to the host's Glewlwyd from this machine, trusting the state's CA alone. */
  const toIdp = (host: string, args: string[], input?: string) =>
    curl(
      [
        ...['-sS', '--cacert', ca, '--capath', '/nonexistent'],
        ...['--resolve', `${nameOf(host)}:${PORT}:${fleet.host(host).address}`],
        ...args,
      ],
      input,
    );
  /** A client_credentials token from the host's Glewlwyd; the secret goes on curl's stdin. */
  const tokenFrom = async (host: string, client: string, secret: string, scope: string) => {
    const asked = await toIdp(
      host,
      [
        ...['-f', '-K', '-', '-d', 'grant_type=client_credentials', '-d', `scope=${scope}`],
        `https://${nameOf(host)}:${PORT}/api/oidc/token`,
      ],
      `user = "${client}:${secret}"\n`,
    );
    assert.equal(asked.code, 0, asked.stderr);
    const answer = JSON.parse(asked.stdout);
    assert.equal(answer.token_type, 'bearer');
    return answer.access_token as string;
  };
  const deployerToken = async () => {
    const secret = await berth('secret', 'alpha', 'glewlwyd', 'deployer_secret');
    assert.equal(secret.code, 0, secret.stderr);
    return tokenFrom('alpha', 'berth-deployer', secret.stdout.trim(), 'berth');
  };
  const ask = (node: string, token?: string) =>
    httpAsk((api as ApiProcess).url, {
      path: '/converge',
      body: JSON.stringify({ node }),
      headers: {
        'Content-Type': 'application/json',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
    });

  before(async () => {
    held = await packageFleet({ hosts: 3, repository: repository as string });
    ({ fleet, runtime } = held);
    for (const host of ['alpha', 'charlie'])
      assert.equal(
        await on(host, `dpkg-query -W -f='\${db:Status-Status}' glewlwyd 2>/dev/null || true`),
        '',
        `${host} starts without glewlwyd`,
      );
    world = await makeWorld();
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    await world.writeSettings({
      nodes: { alpha: { ssh: 'alpha' }, charlie: { ssh: 'charlie' } },
      sshConfig: 'ssh_config',
      grants: [{ sub: 'berth-deployer', may: ['converge'], on: 'alpha' }],
    });
    await copyFile(join(EXAMPLES, 'glewlwyd.json'), join(world.state, 'modules', 'glewlwyd.json'));
    cpSync(join(EXAMPLES, 'glewlwyd'), join(world.state, 'modules', 'glewlwyd'), {
      recursive: true,
    });
    // berth api's own /etc/hosts: this machine's, and alpha's name, in a mount namespace.
    const hosts = join(runtime, 'hosts');
    await writeFile(
      hosts,
      `${readFileSync('/etc/hosts', 'utf8')}\n${fleet.host('alpha').address}\t${nameOf('alpha')}\n`,
    );
    launcher = [
      ...['unshare', '--mount', '--propagation', 'private', 'sh', '-c'],
      'mount --bind "$0" /etc/hosts && exec "$@"',
      hosts,
    ];
  });
  after(async () => {
    await api?.stop();
    for (const host of ['alpha', 'charlie'])
      await fleet?.host(host).exec(`sh ${D}/ctl.sh stop 2>/dev/null; true`);
    await world?.cleanup();
    await held?.stop();
  });

  it('berth api, started before any identity provider, answers the seed 401 naming it', async () => {
    assert.equal((await berth('assign', 'alpha', 'glewlwyd')).code, 0);
    api = await startApi(
      ['--state', world.state, '--listen', '127.0.0.1:0', '--issuer', 'glewlwyd@alpha'],
      env(),
      launcher,
    );
    assert.match(api.lines.join('\n'), new RegExp(`accepting tokens from ${issuer}`));
    const seed = `berth cannot yet verify a token from ${issuer}: the identity provider is a module, and none is running; use the berth command line instead`;
    const answer = await ask('alpha', 'not-yet-a-token');
    assert.equal(answer.status, 401);
    assert.deepEqual(answer.body, { refused: seed, code: 'unauthorized' });
    assert.match(String(answer.headers['www-authenticate']), /^Bearer realm="berth"/);
  });

  it('one converge brings Glewlwyd up from nothing, over https with a certificate of the state CA', async () => {
    const { said, done } = await converge('alpha');
    assert.match(said.stdout, /\n {2}install package glewlwyd /);
    assert.match(
      said.stdout,
      /\n {2}run setup: sh \/etc\/glewlwyd\/berth\/setup\.sh\n {2}run start: /,
    );
    assert.match(done.stdout, /\nalpha is as assigned\n$/);
    const printed = await berth('ca');
    assert.equal(printed.code, 0, printed.stderr);
    ca = join(runtime, 'state-ca.pem');
    await writeFile(ca, printed.stdout);
    // Only the state's CA is trusted (no system store): the certificate is its own.
    const discovery = await toIdp('alpha', [
      '-f',
      `https://${nameOf('alpha')}:${PORT}/api/oidc/.well-known/openid-configuration`,
    ]);
    assert.equal(discovery.code, 0, discovery.stderr);
    assert.equal(JSON.parse(discovery.stdout).issuer, issuer);
    assert.match((await berth('converge', 'alpha')).stdout, /alpha is as assigned: nothing to do/);
  });

  let first: string;
  let keysFetchedBy: number;
  it('its client_credentials token is accepted with no variable set; grants and audience hold', async () => {
    first = await deployerToken();
    const accepted = await ask('alpha', first);
    keysFetchedBy = Date.now();
    assert.equal(accepted.status, 200, accepted.text);
    assert.match(String(accepted.body?.said), /alpha is as assigned: nothing to do/);

    const refused = await ask('charlie', first);
    assert.equal(refused.status, 409, refused.text);
    assert.equal(
      refused.body?.refused,
      'berth-deployer may not converge charlie: no grant names it',
    );
    assert.equal(refused.body?.code, 'not_granted');

    // Another client of the same issuer, for another audience, as its admin would add one.
    await on(
      'alpha',
      `set -e; J=$(mktemp); B=https://${nameOf('alpha')}:${PORT}/api
c() { curl -fsS --cacert ${D}/tls.pem -b "$J" -c "$J" -H 'Content-Type: application/json' -o /dev/null "$@"; }
jq -n --rawfile p ${D}/admin.password '{username: "admin", password: ($p | rtrimstr("\\n"))}' | c -X POST --data-binary @- "$B/auth/"
c -X POST --data-binary '{"name":"other","display_name":"other","description":"another API","password_required":false,"scheme":{}}' "$B/scope/"
c -X POST --data-binary '{"client_id":"other-app","name":"other-app","enabled":true,"confidential":true,"password":"other-app-secret","scope":["other"],"authorization_type":["client_credentials"],"token_endpoint_auth_method":["client_secret_basic"],"redirect_uri":[]}' "$B/client/"
rm -f "$J"`,
    );
    const other = await tokenFrom('alpha', 'other-app', 'other-app-secret', 'other');
    const elsewhere = await ask('alpha', other);
    assert.equal(elsewhere.status, 401, elsewhere.text);
    assert.equal(elsewhere.body?.refused, 'the token is for audience other, not berth');
  });

  it('a Glewlwyd installed by hand is taken with its key, and nothing changes', async () => {
    const charlie = fleet.host('charlie');
    // As an operator would: the packages, a CA and certificate of their own, keys made
    // with openssl, the module's files with the node's name and port put in by hand.
    await on(
      'charlie',
      `DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${PACKAGES.join(' ')} >/dev/null 2>&1`,
    );
    const render = async (name: string) =>
      (await readFile(join(EXAMPLES, 'glewlwyd', name), 'utf8'))
        .replaceAll('{{fact host}}', nameOf('charlie'))
        .replaceAll('{{value port}}', String(PORT));
    await on('charlie', `mkdir -p ${D}`);
    for (const [name, mode] of [
      ['glewlwyd.conf', '644'],
      ['ctl.sh', '700'],
      ['setup.sh', '700'],
    ] as const) {
      const written = await charlie.exec(
        `cat > ${D}/${name} && chmod ${mode} ${D}/${name}`,
        await render(name),
      );
      assert.equal(written.code, 0, written.stderr);
    }
    await on(
      'charlie',
      `set -e; cd ${D}; umask 077
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out /root/ca.key 2>/dev/null
openssl req -x509 -new -key /root/ca.key -sha256 -days 3650 -subj "/CN=hand CA" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign -out /root/ca.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out tls.key 2>/dev/null
openssl req -new -key tls.key -subj "/CN=${nameOf('charlie')}" -out /root/tls.csr
printf 'subjectAltName=DNS:${nameOf('charlie')}\\nbasicConstraints=critical,CA:FALSE\\n' > /root/tls.ext
openssl x509 -req -in /root/tls.csr -CA /root/ca.pem -CAkey /root/ca.key -CAcreateserial -days 365 -sha256 -extfile /root/tls.ext -out tls.pem 2>/dev/null
chmod 644 tls.pem; chown glewlwyd tls.key; chmod 400 tls.key
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out signing.key 2>/dev/null
head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d = > admin.password
head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d = > deployer.secret
sh setup.sh >/dev/null && sh ctl.sh start`,
    );
    const before = await on('charlie', `cd ${D} && ls -l --time-style=+%s.%N . && sha256sum *`);
    const adopted = await berth('adopt', 'charlie');
    assert.equal(adopted.code, 0, adopted.stderr);
    assert.equal((await berth('assign', 'charlie', 'glewlwyd')).code, 0);
    const said = await berth('take', 'charlie', 'glewlwyd');
    assert.equal(said.code, 0, said.stderr);
    // Its key is found, under the very kid the hand-installed Glewlwyd publishes.
    const published = JSON.parse(
      await on(
        'charlie',
        `curl -fsS --cacert ${D}/tls.pem https://${nameOf('charlie')}:${PORT}/api/oidc/jwks`,
      ),
    );
    assert.equal(published.keys.length, 1);
    assert.match(
      said.stdout,
      new RegExp(
        `\nsecret signing_key: found on charlie at ${D}/signing\\.key: an ec-p256 key, kid ${published.keys[0].kid}\n`,
      ),
    );
    assert.match(
      said.stdout,
      /\nsecret tls: found on charlie at [^\n]*, with its certificate found at /,
    );
    assert.match(said.stdout, /\ncheck: passes, so glewlwyd is taken as running\n/);
    assert.doesNotMatch(said.stdout, /differ|missing|mint/);
    const taken = await berth(
      'take',
      'charlie',
      'glewlwyd',
      '--yes',
      '--digest',
      digestOf(said.stdout),
    );
    assert.equal(taken.code, 0, taken.stderr);
    assert.match(
      (await berth('converge', 'charlie')).stdout,
      /charlie is as assigned: nothing to do/,
    );
    assert.equal(
      await on('charlie', `cd ${D} && ls -l --time-style=+%s.%N . && sha256sum *`),
      before,
    );
    const kept = await berth('secret', 'charlie', 'glewlwyd', 'signing_key');
    assert.equal(kept.stdout, await on('charlie', `cat ${D}/signing.key`));
  });

  it('a signing key rotated through berth is trusted at once, and the removed one refused', async () => {
    const said = await berth('converge', 'alpha', '--rotate', 'signing_key');
    assert.equal(said.code, 0, said.stderr);
    // The kid berth names is the one Glewlwyd signs with: the key's RFC 7638 thumbprint.
    const [, kid, was] =
      /\n {2}rotate signing_key: a new ec-p256 key, kid ([\w-]{43}), in place of kid ([\w-]{43});/.exec(
        said.stdout,
      ) ?? [];
    assert.ok(kid, said.stdout);
    assert.equal(was, headerOf(first).kid);
    assert.match(said.stdout, /\n {2}run setup: sh \/etc\/glewlwyd\/berth\/setup\.sh\n/);
    const done = await berth(
      'converge',
      'alpha',
      '--rotate',
      'signing_key',
      '--yes',
      '--digest',
      digestOf(said.stdout),
    );
    assert.equal(done.code, 0, `${done.stdout}\n${done.stderr}`);
    const second = await deployerToken();
    assert.equal(headerOf(second).kid, kid);
    // berth api asks the issuer for its keys at most once a cooldown (against floods of
    // forged tokens); its last ask was the first token's check, before the take above.
    const left = keysFetchedBy + KEY_COOLDOWN_MS - Date.now();
    if (left > 0) await new Promise((done) => setTimeout(done, left));
    const accepted = await ask('alpha', second);
    assert.equal(accepted.status, 200, accepted.text);
    const removed = await ask('alpha', first);
    assert.equal(removed.status, 401, removed.text);
    assert.equal(
      removed.body?.refused,
      `the token is signed with a key that ${issuer} does not publish`,
    );
  });
});
