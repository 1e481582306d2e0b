/** What a preview's digest covers of a node's packages, and what changed: a value, and its words. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { packageChanges } from '../../src/commands/package-changes.ts';
import type { PackageFacts } from '../../src/packages/packages.ts';
import { packagesBasis } from '../../src/packages/packages-basis.ts';
import { canonicalJson } from '../../src/utils/digest.ts';
import { changeWords } from '../../src/words/changes.ts';

const facts = (nginx: string, redisOffered: string[]): PackageFacts => ({
  manager: 'apt',
  packages: {
    nginx: { candidate: nginx, offered: [nginx] },
    'redis-server': { installed: '5:7.0.15-1', candidate: redisOffered[0], offered: redisOffered },
  },
  listsAge: 10,
  simulations: { web: { ok: true, installs: [{ package: 'nginx', version: nginx }] } },
});
const definitions = new Map([
  ['web', { packages: [{ name: 'nginx' }] }],
  ['cache', { packages: [{ name: 'redis-server' }] }],
]);
const basisOf = (found: PackageFacts) =>
  packagesBasis(
    new Map([
      ['web', { packages: found }],
      ['cache', { packages: found }],
    ]),
    definitions,
  );

describe("a preview's basis of packages", () => {
  it('lists fetched anew change nothing of a package installed as wanted', () => {
    const before = basisOf(facts('1.22.1-9', ['5:7.0.15-1']));
    const after = basisOf(facts('1.22.1-9', ['5:7.0.16-1', '5:7.0.15-1']));
    assert.equal(canonicalJson(after), canonicalJson(before));
  });

  it('a mirror that moved a package to install is named', () => {
    const before = basisOf(facts('1.22.1-9', ['5:7.0.15-1']));
    const after = basisOf(facts('1.22.1-10', ['5:7.0.15-1']));
    const changes = packageChanges(before, after);
    assert.deepEqual(changes, [
      { kind: 'package-candidate', package: 'nginx', was: '1.22.1-9', is: '1.22.1-10' },
    ]);
    assert.deepEqual(
      changes.map((change) => changeWords(change, 'web1')),
      ["web1's package lists now offer nginx 1.22.1-10, not 1.22.1-9"],
    );
  });

  it('a package removed by hand is named', () => {
    const before = basisOf(facts('1.22.1-9', ['5:7.0.15-1']));
    const gone = facts('1.22.1-9', ['5:7.0.15-1']);
    if (gone.manager === 'apt')
      gone.packages['redis-server'] = { candidate: '5:7.0.15-1', offered: ['5:7.0.15-1'] };
    const changes = packageChanges(before, basisOf(gone));
    assert.deepEqual(changes, [
      { kind: 'package-removed', package: 'redis-server', was: '5:7.0.15-1' },
    ]);
    assert.deepEqual(
      changes.map((change) => changeWords(change, 'web1')),
      ['package redis-server is no longer installed on web1 (it was 5:7.0.15-1)'],
    );
  });
});
