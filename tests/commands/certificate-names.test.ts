/**
 * The state's CA certifies only names berth.json gives. A node tells its own hostname,
 * fqdn and address; a hostile node (its root, or anyone who can write its /etc/hosts)
 * could tell the identity provider's name, and a certificate for it, signed by the CA
 * berth api trusts for its issuer, would let that node pass for the identity provider.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, type World } from '../helpers/world.ts';

/** A module whose certificate is for the name its node tells. */
const TOLD = {
  description: 'a web service with a certificate for its fqdn',
  secrets: {
    tls: {
      kind: 'tls',
      path: '/etc/web/tls.key',
      cert: '/etc/web/tls.pem',
      names: ['{{fact fqdn}}'],
    },
  },
};

const REFUSED =
  "secrets.tls.names reads {{fact fqdn}}, which the node tells of itself: the state's CA certifies only names berth.json gives, so that no node can have another's name certified; name it with {{fact host}} (where berth reaches the node), {{fact node}} or a {{value NAME}}";

describe("a tls secret's names: only what berth.json gives", () => {
  let world: World;
  const rootOf = (node: string) => join(world.dir, node);
  before(async () => {
    world = await makeWorld({ web: TOLD });
    for (const node of ['idp', 'evil']) await mkdir(join(rootOf(node), 'etc'), { recursive: true });
    await writeFile(join(rootOf('idp'), 'etc', 'hosts'), '127.0.1.1 idp.example.test idp\n');
    // The hostile node's hosts file names it as the identity provider.
    await writeFile(join(rootOf('evil'), 'etc', 'hosts'), '127.0.1.1 idp.example.test idp\n');
    await world.writeSettings({
      nodes: { idp: { root: rootOf('idp') }, evil: { root: rootOf('evil') } },
    });
  });
  after(() => world?.cleanup());

  it('refuses names a node tells of itself, in validate and in a converge, and certifies nothing', async () => {
    const validate = await world.berth('validate');
    assert.equal(validate.code, 1, validate.stdout);
    assert.equal(validate.stdout, `${join(world.state, 'modules', 'web.json')}: ${REFUSED}\n`);
    // Kept, as any assignment of a module that does not resolve; blocked at converge.
    assert.equal((await world.berth('assign', 'evil', 'web')).code, 1);
    const preview = await world.berth('converge', 'evil');
    assert.ok(preview.stdout.includes(`blocked: web does not resolve: `), preview.stdout);
    assert.ok(preview.stdout.includes(REFUSED), preview.stdout);
    const act = await world.actOn(preview, 'converge', 'evil');
    assert.equal(act.code, 1, act.stdout);
    assert.equal(existsSync(join(rootOf('evil'), 'etc', 'web', 'tls.pem')), false);
    assert.equal(existsSync(join(world.state, 'ca.json')), false, 'no CA was made for it');
  });

  it('certifies a name from berth.json: the node, where berth reaches it, or a value', async () => {
    await world.writeModule('web', {
      ...TOLD,
      values: { name: { type: 'string' } },
      secrets: {
        tls: { ...TOLD.secrets.tls, names: ['{{fact node}}', '{{fact host}}', '{{value name}}'] },
      },
    });
    await world.writeSettings({
      nodes: { idp: { root: rootOf('idp') }, evil: { root: rootOf('evil') } },
      values: { evil: { name: 'evil.example.test' } },
    });
    await world.berth('assign', 'evil', 'web');
    const preview = await world.berth('converge', 'evil');
    assert.equal(preview.code, 0, preview.stderr);
    const act = await world.actOn(preview, 'converge', 'evil');
    assert.equal(act.code, 0, act.stderr);
    const certificate = new X509Certificate(
      await readFile(join(rootOf('evil'), 'etc', 'web', 'tls.pem')),
    );
    assert.equal(certificate.subjectAltName, 'DNS:evil, DNS:localhost, DNS:evil.example.test');
  });
});
