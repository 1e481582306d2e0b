/**
 * The owner lookup and the file diff that every plan (take's and converge's) is made
 * with, alone: facts as a survey gives them, words and steps as a preview shows them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareFile } from '../../src/commands/steps/file-diff.ts';
import { Owners, SECRET_FILE_MODE } from '../../src/commands/steps/owners.ts';
import type { PathFacts } from '../../src/machines/machine.ts';
import { blockerWords } from '../../src/words/blockers.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const file = (text: string, mode = '0640'): PathFacts => ({
  kind: 'file',
  size: text.length,
  mode,
  uid: 0,
  gid: 0,
  bytes: bytes(text),
});

describe('the one file diff', () => {
  const content = 'port 6379\nrequirepass {{secret password}}\n';
  const secrets = {
    values: { password: 'vault-value' },
    hidden: [['password', 'vault-value'] as const],
  };

  it('says a file that is not there is missing, and what berth would write', () => {
    const compared = compareFile('box', '/etc/r.conf', { kind: 'missing' }, content, secrets);
    assert.deepEqual(compared.why, { because: 'missing' });
    assert.equal(new TextDecoder().decode(compared.wanted), 'port 6379\nrequirepass vault-value\n');
  });

  it('says nothing of a file whose bytes are what berth writes', () => {
    const same = file('port 6379\nrequirepass vault-value\n');
    assert.equal(compareFile('box', '/etc/r.conf', same, content, secrets).why, undefined);
  });

  it('shows a difference as diff -u does, with no secret value on either side', () => {
    const held = file('port 6380\nrequirepass held-value\n');
    const compared = compareFile('box', '/etc/r.conf', held, content, {
      values: secrets.values,
      hidden: [...secrets.hidden, ['password', 'held-value']],
    });
    assert.deepEqual(compared.why, {
      because: 'differs',
      diff: [
        '--- /etc/r.conf on box',
        '+++ /etc/r.conf as berth writes it',
        '@@ -1,2 +1,2 @@',
        '-port 6380',
        '+port 6379',
        ' requirepass [secret password]',
      ],
    });
    assert.doesNotMatch(
      compared.why?.because === 'differs' ? compared.why.diff.join('\n') : '',
      /value/,
    );
  });

  it('says a file too long to read differs, without reading it', () => {
    const long: PathFacts = { kind: 'file', size: 9_000_000, mode: '0644', uid: 0, gid: 0 };
    assert.deepEqual(compareFile('box', '/etc/r.conf', long, content, secrets).why, {
      because: 'differs',
      diff: ['(over 9000000 bytes: too long to read)'],
    });
  });
});

describe('the one owner lookup', () => {
  const survey = {
    facts: new Map<string, PathFacts>([['/etc/svc/old', file('x', '0644')]]),
    accounts: { users: new Map([['git', 1001]]), groups: new Map([['git', 1002]]) },
  };

  it('writes a file with the ids its named owner and group have on the machine', () => {
    const owners = new Owners('svc', survey);
    assert.deepEqual(
      owners.file('/etc/svc/key', { owner: 'git', group: 'git' }, SECRET_FILE_MODE),
      {
        mode: '0600',
        uid: 1001,
        gid: 1002,
      },
    );
    assert.deepEqual(owners.blockers, []);
  });

  it('keeps what a file has when its definition names nothing', () => {
    const owners = new Owners('svc', survey);
    assert.deepEqual(owners.file('/etc/svc/old', {}, SECRET_FILE_MODE), {
      mode: '0644',
      uid: 0,
      gid: 0,
    });
  });

  it('makes a name the machine lacks a blocker, once a path, in words both commands use', () => {
    const owners = new Owners('svc', survey);
    owners.file('/etc/svc/key', { owner: 'ghost' }, SECRET_FILE_MODE);
    owners.drift('/etc/svc/key', { owner: 'ghost' });
    assert.deepEqual(owners.blockers, [
      {
        because: 'no-such-account',
        module: 'svc',
        kind: 'user',
        name: 'ghost',
        path: '/etc/svc/key',
      },
    ]);
    assert.equal(
      blockerWords(owners.blockers[0] as (typeof owners.blockers)[0], 'box'),
      'svc names owner ghost for /etc/svc/key, but box has no user ghost: add it on box, or name another in the definition',
    );
  });

  it('names the drift of a path that is there', () => {
    const owners = new Owners('svc', survey);
    assert.deepEqual(owners.drift('/etc/svc/old', { owner: 'git', mode: '600' }), [
      { what: 'mode', was: '0644', want: '0600' },
      { what: 'owner', was: '0', want: 'git (1001)' },
    ]);
  });
});

describe('a secret’s file another user owns', () => {
  /** A file at `path` owned by uid:gid, as a survey reports it. */
  const owned = (uid: number, gid: number, mode: string): PathFacts => ({
    kind: 'file',
    size: 0,
    mode,
    uid,
    gid,
  });
  const facts = new Map<string, PathFacts>([
    ['/srv/app/planted', owned(1234, 1234, '0666')],
    ['/etc/redis/redis.conf', owned(0, 1002, '0640')],
    ['/srv/app/berths', owned(500, 500, '0640')],
    ['/srv/app/gits', owned(1001, 1001, '0640')],
  ]);
  const accounts = { users: new Map([['git', 1001]]), groups: new Map([['git', 1002]]) };
  const owners = (actor?: { uid: number; gid: number }) =>
    new Owners('svc', { facts, accounts: actor ? { ...accounts, actor } : accounts });

  it('keeps none of the planted file: berth’s own user and group, 0600, and whose it was', () => {
    assert.deepEqual(owners().secretFile('/srv/app/planted', {}), {
      mode: '0600',
      uid: 0,
      gid: 0,
      replaces: { uid: 1234, gid: 1234 },
    });
    assert.deepEqual(owners().secretFile('/srv/app/planted', { owner: 'git', mode: '0440' }), {
      mode: '0440',
      uid: 1001,
      gid: 0,
      replaces: { uid: 1234, gid: 1234 },
    });
  });

  it('says how the planted file differs from what berth writes', () => {
    assert.deepEqual(owners().secretDrift('/srv/app/planted', {}), [
      { what: 'owner', was: '1234', want: '0' },
      { what: 'group', was: '1234', want: '0' },
      { what: 'mode', was: '0666', want: '0600' },
    ]);
    const placing = { content: 'key = {{secret key}}\n' };
    assert.equal(owners().moduleFileDrift('/srv/app/planted', placing).length, 3);
    // A file placing no secret keeps what it is not told, whoever owns it.
    assert.deepEqual(owners().moduleFileDrift('/srv/app/planted', { content: 'x\n' }), []);
  });

  it('keeps the group of a file root owns, and a file of berth’s own user or of the owner named', () => {
    assert.deepEqual(owners().secretFile('/etc/redis/redis.conf', {}), {
      mode: '0640',
      uid: 0,
      gid: 1002,
    });
    assert.deepEqual(owners({ uid: 500, gid: 500 }).secretFile('/srv/app/berths', {}), {
      mode: '0640',
      uid: 500,
      gid: 500,
    });
    assert.deepEqual(owners({ uid: 500, gid: 500 }).secretDrift('/srv/app/berths', {}), []);
    assert.deepEqual(owners().secretFile('/srv/app/gits', { owner: 'git' }), {
      mode: '0640',
      uid: 1001,
      gid: 1001,
    });
  });
});
