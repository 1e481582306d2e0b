/**
 * `berth api --issuer MODULE@NODE`: the issuer a module provides (`provides.issuer`),
 * resolved at the start from the node's values and facts, printed in the second start
 * line before the module is even up (which answers the seed's 401 until it is), and
 * trusted over https with the certificate the state's CA gave the module. The real `berth
 * api` process, a real issuer (tests/helpers/issuer.ts) serving with the module's key and
 * certificate as berth placed them on the node.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { noIdentityProvider } from '../src/http/authenticator.ts';
import { httpAsk, runApiExpectingEnd, startApi } from './helpers/api-process.ts';
import { freePort, startIssuer } from './helpers/issuer.ts';
import { makeWorld, type World } from './helpers/world.ts';

/** An identity provider as a module: its issuer named once, from the node's fqdn. */
const IDP = {
  description: 'an identity provider',
  values: { port: { type: 'integer', default: 4593 } },
  provides: { issuer: 'https://{{fact fqdn}}:{{value port}}/api/oidc' },
};

/** One served on loopback over https, with a certificate from the state's CA. */
const LOCAL_IDP = {
  description: 'an identity provider on loopback',
  values: { port: { type: 'integer' } },
  secrets: {
    tls: { kind: 'tls', path: '/etc/idp/tls.key', cert: '/etc/idp/tls.pem', names: ['127.0.0.1'] },
  },
  provides: { issuer: 'https://127.0.0.1:{{value port}}' },
};

/** The real `berth api` over a state, on a free port, believing `issuer`. */
const startApiOn = (state: string, issuer: string) =>
  startApi(['--listen', '127.0.0.1:0', '--issuer', issuer, '--state', state]);

describe('berth api --issuer MODULE@NODE', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({
      idp: IDP,
      local: LOCAL_IDP,
      plain: { description: 'no issuer' },
      needy: {
        description: 'an issuer whose realm berth.json must give',
        values: { realm: { type: 'string' } },
        provides: { issuer: 'https://id.example.test/realms/{{value realm}}' },
      },
    });
    await world.onBox('etc/hostname', 'idp\n');
    await world.onBox('etc/hosts', '127.0.1.1 idp.example.test idp\n');
  });
  after(() => world?.cleanup());

  it("prints the URL the module provides there in its start lines, before the module is up, and answers the seed's 401", async () => {
    assert.equal((await world.berth('assign', 'box', 'idp')).code, 0);
    const url = 'https://idp.example.test:4593/api/oidc';
    const api = await startApiOn(world.state, 'idp@box');
    try {
      assert.match(api.lines[0] ?? '', /^serving http:\/\/127\.0\.0\.1:\d+$/);
      assert.deepEqual(api.lines.slice(1, 3), [
        `accepting tokens from ${url}`,
        'every route calls what the command line calls',
      ]);
      assert.match(
        api.stderr(),
        new RegExp(
          `berth api: --issuer idp@box is ${url}: provides.issuer of idp on box, with box's facts surveyed now\\n`,
        ),
      );
      const answer = await httpAsk(api.url, {
        path: '/converge',
        body: JSON.stringify({ node: 'box' }),
        headers: { authorization: 'Bearer a.b.c', 'content-type': 'application/json' },
      });
      assert.equal(answer.status, 401);
      assert.equal(answer.body?.refused, noIdentityProvider(url));
    } finally {
      await api.stop();
    }
  });

  it("trusts the module's issuer once it is up, over https with the certificate berth gave it", async () => {
    const port = await freePort();
    await world.writeSettings({ nodes: { box: { root: world.root } }, values: { box: { port } } });
    assert.equal((await world.berth('assign', 'box', 'local')).code, 0);
    const preview = await world.berth('converge', 'box');
    const act = await world.actOn(preview, 'converge', 'box');
    assert.equal(act.code, 0, act.stderr);
    const api = await startApiOn(world.state, 'local@box');
    // The module's service: serving with the key and certificate berth placed on the node.
    const issuer = await startIssuer({
      port,
      tls: {
        key: await readFile(join(world.root, 'etc/idp/tls.key'), 'utf8'),
        cert: await readFile(join(world.root, 'etc/idp/tls.pem'), 'utf8'),
      },
    });
    try {
      assert.equal(api.lines[1], `accepting tokens from https://127.0.0.1:${port}`);
      const answer = await httpAsk(api.url, {
        path: '/assign',
        body: JSON.stringify({ node: 'box', module: 'plain' }),
        headers: {
          authorization: `Bearer ${await issuer.token()}`,
          'content-type': 'application/json',
        },
      });
      assert.equal(answer.status, 200, `${answer.text}\n${api.stderr()}`);
      assert.equal(answer.body?.said, 'box is to run plain');
    } finally {
      await api.stop();
      await issuer.close();
    }
  });

  it('refuses, before it listens, a form that is neither, a node or module it does not know, a module the node is not to run, one that provides no issuer', async () => {
    for (const [issuer, words] of [
      [
        'idp@box@box',
        /berth api --issuer idp@box@box: give --issuer the issuer's URL \(https:\/\/…\), or one module and the node it runs on, as MODULE@NODE \(glewlwyd@idp1\)/,
      ],
      ['idp@', /berth api --issuer idp@: "" is not a node name: names are 1 to 63 characters/],
      ['IdP@box', /berth api --issuer IdP@box: "IdP" is not a module name/],
      [
        'idp',
        /--issuer takes the issuer's URL, like https:\/\/id\.example\.org\/realms\/berth, not "idp"/,
      ],
      ['idp@bx', /berth api --issuer idp@bx: berth\.json has no node bx; did you mean box\?/],
      [
        'ipd@box',
        /berth api --issuer ipd@box: no module ipd: it is not in the catalog .*; did you mean idp\?/,
      ],
      [
        'plain@box',
        /berth api --issuer plain@box: plain provides no issuer: its definition names none under provides\.issuer/,
      ],
      ['local@box', /berth api --issuer local@box: box is not to run local: assign it first/],
      [
        'needy@box',
        /berth api --issuer needy@box: needy needs the value realm, which berth\.json does not give box/,
      ],
    ] as const) {
      if (issuer === 'plain@box')
        assert.equal((await world.berth('assign', 'box', 'plain')).code, 0);
      if (issuer === 'local@box')
        assert.equal((await world.berth('unassign', 'box', 'local')).code, 0);
      if (issuer === 'needy@box')
        assert.equal((await world.berth('assign', 'box', 'needy')).code, 0);
      const ended = await runApiExpectingEnd([
        '--listen',
        '127.0.0.1:0',
        '--issuer',
        issuer,
        '--state',
        world.state,
      ]);
      assert.equal(ended.code, 2, ended.stderr);
      assert.match(ended.stderr, words);
      assert.equal(ended.stdout, '', 'nothing served');
    }
  });

  it('reads the facts of the newest survey berth keeps of a node it cannot reach; without one, it does not start', async () => {
    const far = await makeWorld({ idp: IDP });
    try {
      const root = join(far.dir, 'far');
      await far.rootedNodes(['far']);
      await far.writeModule('idp', IDP);
      await mkdir(join(root, 'etc'), { recursive: true });
      await writeFile(join(root, 'etc/hostname'), 'far\n');
      await writeFile(join(root, 'etc/hosts'), '10.9.8.7 far.example.test far\n');
      assert.equal((await far.berth('assign', 'far', 'idp')).code, 0);
      const unreachable = { nodes: { far: { ssh: 'far.invalid' } } };
      await far.writeSettings(unreachable);
      const refused = await runApiExpectingEnd([
        '--listen',
        '127.0.0.1:0',
        '--issuer',
        'idp@far',
        '--state',
        far.state,
      ]);
      assert.equal(refused.code, 2);
      assert.match(
        refused.stderr,
        /berth api --issuer idp@far: far cannot be reached \(.*far\.invalid.*\), and berth keeps no survey of it with its facts: reach it once \(berth converge far previews and keeps one\), then start berth api/,
      );
      // Reached once as it was: its preview is kept, with its facts.
      await far.rootedNodes(['far']);
      assert.equal((await far.berth('converge', 'far')).code, 0);
      await far.writeSettings(unreachable);
      const api = await startApiOn(far.state, 'idp@far');
      try {
        assert.equal(api.lines[1], 'accepting tokens from https://far.example.test:4593/api/oidc');
        assert.match(
          api.stderr(),
          /with the facts of far's survey kept at \S+ \(far cannot be reached now: .*\)\n/,
        );
      } finally {
        await api.stop();
      }
    } finally {
      await far.cleanup();
    }
  });

  it("an issuer URL works as before, and an empty one still fails with the seed's words", async () => {
    const ended = await runApiExpectingEnd([
      '--listen',
      '127.0.0.1:0',
      '--issuer',
      ' ',
      '--state',
      world.state,
    ]);
    assert.equal(ended.code, 2);
    assert.match(ended.stderr, /berth api will not run without being told whose tokens to believe/);
    const api = await startApiOn(world.state, 'https://id.example.org/realms/berth');
    try {
      assert.equal(api.lines[1], 'accepting tokens from https://id.example.org/realms/berth');
    } finally {
      await api.stop();
    }
  });
});
