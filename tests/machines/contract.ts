/**
 * The Machine contract: what every machine berth acts on does, whatever reaches it. This
 * suite is the specification `src/machines/machine.ts` points to; each kind of machine
 * runs it (rooted.test.ts, ssh.test.ts).
 *
 * Paths given to the machine are machine paths. The suite sets up and inspects through
 * `exec`, a shell running as root where the machine's files are, at `root` + the machine
 * path (`/` for a machine reached over ssh).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { PATH_MAX, READ_LIMIT } from '../../src/machines/limits.ts';
import {
  type Change,
  type DirectoryOptions,
  type Machine,
  MachineError,
  type PathFacts,
  RAW_OUTPUT_KEPT,
  type RunResult,
  type WriteOptions,
} from '../../src/machines/machine.ts';
import { hostileContract } from './contract-hostile.ts';

/** A batch of one change, its failure thrown: a write or a directory on its own. */
async function applyOne(machine: Machine, change: Change) {
  const applied = await machine.apply([change]);
  if (applied.failure) throw applied.failure;
  assert.equal(applied.done, 1);
}

/** A file written by a batch of one. */
export function write(machine: Machine, path: string, data: Uint8Array, options: WriteOptions) {
  return applyOne(machine, { kind: 'file', path, data, options });
}

/** A directory made by a batch of one. */
export function makeDirectory(machine: Machine, path: string, options: DirectoryOptions = {}) {
  return applyOne(machine, { kind: 'directory', path, options });
}

export interface MachineUnderTest {
  machine: Machine;
  /** Runs a shell script as root (or as the test's user) on that machine; its output. */
  exec(script: string): Promise<string>;
  /** Where machine paths live from exec's point of view: `/` for ssh. */
  root: string;
  /** A machine of the same kind that cannot be reached. */
  unreachable: Machine;
  /**
   * The same machine as a user that may not look everywhere, when there is one: the
   * contract stages "permission denied" through it (root may look everywhere).
   */
  unprivileged?: Machine;
  cleanup(): Promise<void>;
}

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);
const bytesOf = (value: string) => new TextEncoder().encode(value);
/** A machine-path-safe quoting for exec's scripts. */
export const q = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

function isUnreachable(error: unknown) {
  assert.ok(error instanceof MachineError, `a MachineError, not ${String(error)}`);
  assert.equal(error.failure, 'unreachable', error.message);
  assert.ok(error.message.length > 0, 'with words');
  return true;
}

/** `skip`: why this machine cannot make the machine under test; each test is skipped saying so. */
export function machineContract(
  name: string,
  makeMachine: () => Promise<MachineUnderTest>,
  skip?: string,
) {
  describe(`the Machine contract: ${name}`, () => {
    let subject: MachineUnderTest;
    let machine: Machine;
    /** Machine path of this run's own directory. */
    const base = `/tmp/berth-contract-${randomBytes(4).toString('hex')}`;
    let serial = 0;
    /** A fresh machine path of a directory that does not exist yet. */
    const fresh = () => `${base}/${++serial}`;
    /** A machine path as exec sees it, quoted for its shell. */
    const at = (path: string) => q(subject.root === '/' ? path : `${subject.root}${path}`);
    const exec = (script: string) => subject.exec(script);
    let rootUid = 0;
    let owner = { uid: 1234, gid: 2345 };

    before(async () => {
      if (skip) return;
      subject = await makeMachine();
      machine = subject.machine;
      await exec(`mkdir -p ${at(base)}`);
      rootUid = Number((await exec('id -u')).trim());
      if (rootUid !== 0) {
        // Without root a file can only be given the test user's own ids.
        owner = { uid: rootUid, gid: Number((await exec('id -g')).trim()) };
      }
    });
    after(async () => {
      if (skip) return;
      await exec(`rm -rf ${at(base)}`).catch(() => {});
      await subject?.cleanup();
    });

    const one = async (path: string, read = false): Promise<PathFacts> => {
      const survey = await machine.survey([{ path, read }]);
      const facts = survey.get(path);
      assert.ok(facts, `an answer for ${path}`);
      return facts;
    };

    describe('survey', () => {
      it('answers for every path asked, keyed by the path, in one call', { skip }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(dir)} && echo x > ${at(`${dir}/f`)}`);
        const paths = [`${dir}/f`, `${dir}/none`, dir];
        const survey = await machine.survey(paths.map((path) => ({ path })));
        assert.deepEqual([...survey.keys()].sort(), [...paths].sort());
      });

      it('resolves user and group names through the machine, in the same survey', {
        skip,
      }, async () => {
        if (subject.root !== '/') {
          // A rooted machine's accounts are its root's own /etc/passwd and /etc/group.
          await exec(
            `mkdir -p ${at('/etc')} && printf 'root:x:0:0::/root:/bin/sh\\nnobody:x:65534:65534::/:/bin/false\\n' > ${at('/etc/passwd')} && printf 'root:x:0:\\nnogroup:x:65534:\\n' > ${at('/etc/group')}`,
          );
        }
        const dir = fresh();
        const survey = await machine.survey([{ path: dir }], {
          users: ['root', 'berth-no-such-user'],
          groups: ['root', 'berth-no-such-group'],
        });
        assert.deepEqual(survey.get(dir), { kind: 'missing' });
        // With them, who berth acts as there: root over ssh (as root or through sudo), the
        // process's own user on a rooted machine.
        const actor =
          subject.root === '/'
            ? { uid: 0, gid: 0 }
            : { uid: process.geteuid?.() ?? 0, gid: process.getegid?.() ?? 0 };
        assert.deepEqual(survey.accounts, {
          users: new Map([['root', 0]]),
          groups: new Map([['root', 0]]),
          actor,
        });
        if (subject.unprivileged) {
          // A login that is not root acts as itself: what it writes is its own.
          const theirs = await subject.unprivileged.survey([{ path: dir }], {
            users: [],
            groups: [],
          });
          assert.notEqual(theirs.accounts?.actor?.uid ?? 0, 0);
        }
      });

      it('a directory made is given the owner and mode asked for, made or not', {
        skip,
      }, async () => {
        const dir = fresh();
        await makeDirectory(machine, `${dir}/made`, { mode: 0o750, ...owner });
        await exec(`mkdir -p ${at(`${dir}/there`)} && chmod 0755 ${at(`${dir}/there`)}`);
        await makeDirectory(machine, `${dir}/there`, { mode: 0o700, ...owner });
        for (const made of [`${dir}/made`, `${dir}/there`]) {
          const facts = await one(made);
          assert.equal(facts.kind, 'directory');
          assert.equal('uid' in facts && facts.uid, owner.uid);
          assert.equal('gid' in facts && facts.gid, owner.gid);
        }
        assert.equal(((await one(`${dir}/made`)) as { mode: string }).mode, '0750');
        assert.equal(((await one(`${dir}/there`)) as { mode: string }).mode, '0700');
      });

      it('an empty survey only checks that the machine can be reached', { skip }, async () => {
        const survey = await machine.survey([]);
        assert.equal(survey.size, 0);
      });

      it('a path that is not there is missing, as is a path under a file', { skip }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(dir)} && echo x > ${at(`${dir}/file`)}`);
        assert.deepEqual(await one(`${dir}/nothing`), { kind: 'missing' });
        assert.deepEqual(await one(`${dir}/nothing/deeper`, true), { kind: 'missing' });
        assert.deepEqual(await one(`${dir}/file/under`, true), { kind: 'missing' });
      });

      it('a file: its size, mode as four octal digits, owner; no bytes unless asked', {
        skip,
      }, async () => {
        const dir = fresh();
        const file = `${dir}/app.conf`;
        await exec(
          `mkdir -p ${at(dir)} && printf 'port=3000\\n' > ${at(file)} && chmod 0640 ${at(file)} && chown ${owner.uid}:${owner.gid} ${at(file)}`,
        );
        assert.deepEqual(await one(file), {
          kind: 'file',
          size: 10,
          mode: '0640',
          uid: owner.uid,
          gid: owner.gid,
        });
      });

      it('special permission bits are part of the mode', { skip }, async () => {
        const dir = fresh();
        await exec(
          `mkdir -p ${at(dir)} && touch ${at(`${dir}/s`)} && chmod 4755 ${at(`${dir}/s`)}`,
        );
        await exec(`mkdir ${at(`${dir}/sticky`)} && chmod 1777 ${at(`${dir}/sticky`)}`);
        const file = await one(`${dir}/s`);
        assert.equal(file.kind, 'file');
        assert.equal('mode' in file && file.mode, '4755');
        const sticky = await one(`${dir}/sticky`);
        assert.equal('mode' in sticky && sticky.mode, '1777');
      });

      it('read brings a file’s bytes exactly, whatever they are', { skip }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(dir)}`);
        const all = new Uint8Array(256 * 3).map((_, index) => index % 256);
        await write(machine, `${dir}/binary`, all, { mode: 0o600 });
        await exec(`printf '' > ${at(`${dir}/empty`)}`);
        const survey = await machine.survey([
          { path: `${dir}/binary`, read: true },
          { path: `${dir}/empty`, read: true },
        ]);
        const binary = survey.get(`${dir}/binary`);
        assert.ok(binary?.kind === 'file');
        assert.deepEqual(binary.bytes, all);
        assert.equal(binary.size, all.length);
        const empty = survey.get(`${dir}/empty`);
        assert.ok(empty?.kind === 'file');
        assert.deepEqual(empty.bytes, new Uint8Array());
      });

      it('bytes up to READ_LIMIT come back; a larger file gives its facts and no bytes', {
        skip,
      }, async () => {
        const dir = fresh();
        // Sparse files: big without costing the disk.
        await exec(
          `mkdir -p ${at(dir)} && truncate -s ${READ_LIMIT} ${at(`${dir}/at-limit`)} && truncate -s ${READ_LIMIT + 1} ${at(`${dir}/over`)}`,
        );
        const survey = await machine.survey([
          { path: `${dir}/at-limit`, read: true },
          { path: `${dir}/over`, read: true },
        ]);
        const atLimit = survey.get(`${dir}/at-limit`);
        assert.ok(atLimit?.kind === 'file');
        assert.equal(atLimit.bytes?.length, READ_LIMIT);
        assert.ok(atLimit.bytes.every((byte) => byte === 0));
        const over = survey.get(`${dir}/over`);
        assert.ok(over?.kind === 'file');
        assert.equal(over.size, READ_LIMIT + 1);
        assert.equal(over.bytes, undefined);
      });

      it('a directory says whether it is empty; a dot file makes it not empty', {
        skip,
      }, async () => {
        const dir = fresh();
        await exec(
          `mkdir -p ${at(`${dir}/empty`)} ${at(`${dir}/dotted`)} ${at(`${dir}/full`)} && touch ${at(`${dir}/dotted/.hidden`)} ${at(`${dir}/full/a`)} && chmod 0750 ${at(`${dir}/full`)} && chown ${owner.uid}:${owner.gid} ${at(`${dir}/full`)}`,
        );
        const survey = await machine.survey([
          { path: `${dir}/empty`, read: true },
          { path: `${dir}/dotted` },
          { path: `${dir}/full` },
        ]);
        assert.equal((survey.get(`${dir}/empty`) as { empty: boolean }).empty, true);
        assert.equal(survey.get(`${dir}/empty`)?.kind, 'directory');
        assert.equal((survey.get(`${dir}/dotted`) as { empty: boolean }).empty, false);
        assert.deepEqual(survey.get(`${dir}/full`), {
          kind: 'directory',
          empty: false,
          mode: '0750',
          uid: owner.uid,
          gid: owner.gid,
        });
      });

      it('what is neither file nor directory (a fifo) is other', { skip }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(dir)} && mkfifo ${at(`${dir}/pipe`)}`);
        assert.deepEqual(await one(`${dir}/pipe`, true), { kind: 'other' });
      });

      it('a symbolic link is followed; a dangling one is missing; a loop is unreadable', {
        skip,
      }, async () => {
        const dir = fresh();
        await exec(
          `mkdir -p ${at(dir)} && echo hi > ${at(`${dir}/target`)} && ln -s target ${at(`${dir}/link`)} && ln -s gone ${at(`${dir}/dangling`)} && ln -s loop ${at(`${dir}/loop`)}`,
        );
        const link = await one(`${dir}/link`, true);
        assert.ok(link.kind === 'file');
        assert.equal(text(link.bytes), 'hi\n');
        assert.deepEqual(await one(`${dir}/dangling`), { kind: 'missing' });
        const loop = await one(`${dir}/loop`);
        assert.equal(loop.kind, 'unreadable');
        assert.ok(loop.kind === 'unreadable' && loop.reason.length > 0);
      });

      it('a path under a file, a dangling link or a loop, or named too long, is answered as stat answers it', {
        skip,
      }, async () => {
        const dir = fresh();
        await exec(
          `mkdir -p ${at(dir)} && echo x > ${at(`${dir}/file`)} && ln -s file ${at(`${dir}/to-file`)} && ln -s gone ${at(`${dir}/dangling`)} && ln -s loop ${at(`${dir}/loop`)}`,
        );
        const long = 'n'.repeat(256);
        const survey = await machine.survey([
          { path: `${dir}/to-file/under` },
          { path: `${dir}/dangling/under`, read: true },
          { path: `${dir}/loop/under` },
          { path: `${dir}/${long}` },
          { path: `${dir}/none/${long}` },
          { path: `${dir}/${'d/'.repeat(2100)}x` },
          { path: `${dir}/file`, read: true },
        ]);
        for (const path of [
          `${dir}/to-file/under`,
          `${dir}/dangling/under`,
          `${dir}/none/${long}`,
        ]) {
          assert.deepEqual(survey.get(path), { kind: 'missing' }, path);
        }
        for (const [path, reason] of [
          [`${dir}/loop/under`, /symbolic links/],
          [`${dir}/${long}`, /too long/],
          [`${dir}/${'d/'.repeat(2100)}x`, /too long/],
        ] as const) {
          const facts = survey.get(path);
          assert.ok(facts?.kind === 'unreadable', `${path.slice(0, 80)} is unreadable`);
          assert.match(facts.reason, reason);
        }
        const file = survey.get(`${dir}/file`);
        assert.ok(file?.kind === 'file');
        assert.equal(text(file.bytes), 'x\n');
      });

      it('a path of PATH_MAX bytes is too long, one byte less is answered: bytes, not characters', {
        skip,
      }, async () => {
        const dir = fresh();
        const bytes = (path: string) => bytesOf(path).length;
        // Names of two-byte characters: in UTF-16 units the path is far shorter than in bytes.
        const name = 'é'.repeat(100);
        const names: string[] = [];
        while (bytes(`${dir}/${names.join('/')}`) + 1 + bytes(name) + 1 + 50 < PATH_MAX - 1)
          names.push(name);
        const above = `${dir}/${names.join('/')}`;
        const last = 'x'.repeat(PATH_MAX - 1 - bytes(above) - 1);
        const atLimit = `${above}/${last}`;
        const over = `${atLimit}x`;
        assert.equal(bytes(atLimit), PATH_MAX - 1);
        // Made a name at a time: on the rooted machine, root and path together are longer
        // than one call may take.
        await exec(
          `cd ${at('/')} && mkdir -p ${q(dir.slice(1))} && cd ${q(dir.slice(1))} && ${names.map((one) => `mkdir ${q(one)} && cd ${q(one)}`).join(' && ')} && echo x > ${q(last)} && echo x > ${q(`${last}x`)}`,
        );
        const survey = await machine.survey([
          { path: atLimit, read: true },
          { path: over, read: true },
        ]);
        const file = survey.get(atLimit);
        assert.ok(file?.kind === 'file', `${file?.kind}: the path at the limit is a file`);
        assert.equal(text(file.bytes), 'x\n');
        const tooLong = survey.get(over);
        assert.ok(tooLong?.kind === 'unreadable');
        assert.match(tooLong.reason, /too long/);
      });

      it('a path under a directory berth may not search is unreadable however it is reached', {
        skip,
      }, async (t) => {
        const { unprivileged } = subject;
        if (!unprivileged) {
          t.skip('this machine runs as root here, and root may look everywhere');
          return;
        }
        const dir = fresh();
        await exec(
          `mkdir -p ${at(`${dir}/closed/deeper`)} && echo s > ${at(`${dir}/closed/secret`)} && chmod 0700 ${at(`${dir}/closed`)} && chown -R 0:0 ${at(`${dir}/closed`)} && ln -s closed/secret ${at(`${dir}/to-secret`)} && ln -s closed/none ${at(`${dir}/to-none`)} && echo open > ${at(`${dir}/open`)} && chmod 0644 ${at(`${dir}/open`)}`,
        );
        const survey = await unprivileged.survey([
          { path: `${dir}/closed/deeper/still`, read: true },
          { path: `${dir}/closed/none` },
          { path: `${dir}/to-secret`, read: true },
          { path: `${dir}/to-none` },
          { path: `${dir}/open`, read: true },
        ]);
        for (const path of [
          `${dir}/closed/deeper/still`,
          `${dir}/closed/none`,
          `${dir}/to-secret`,
          `${dir}/to-none`,
        ]) {
          assert.deepEqual(
            survey.get(path),
            { kind: 'unreadable', reason: 'permission denied' },
            path,
          );
        }
        const open = survey.get(`${dir}/open`);
        assert.ok(open?.kind === 'file');
        assert.equal(text(open.bytes), 'open\n');
      });

      it('a path that comes and goes while many are surveyed leaves the others’ answers as they are', {
        skip,
      }, async () => {
        const dir = fresh();
        await exec(
          `mkdir -p ${at(`${dir}/d`)} && for i in $(seq 1 10); do echo "file $i" > ${at(dir)}/f$i; done`,
        );
        const paths = Array.from({ length: 10 }, (_, index) => [
          { path: `${dir}/comes-and-goes`, read: true },
          { path: `${dir}/f${index + 1}`, read: true },
        ]).flat();
        paths.push({ path: `${dir}/d`, read: false });
        // Until the stop file appears, the path is made and removed over and over.
        const churn = exec(
          `cd ${at(dir)} && while [ ! -e stop ]; do echo here > comes-and-goes; rm -f comes-and-goes; done`,
        );
        try {
          for (let round = 0; round < 20; round++) {
            const survey = await machine.survey(paths);
            for (let index = 0; index < 10; index++) {
              const facts = survey.get(`${dir}/f${index + 1}`);
              assert.ok(facts?.kind === 'file');
              assert.equal(text(facts.bytes), `file ${index + 1}\n`);
              assert.equal(facts.size, `file ${index + 1}\n`.length);
            }
            assert.equal(survey.get(`${dir}/d`)?.kind, 'directory');
            // Gone between its stat and its read, it may be unreadable too: it has an answer.
            assert.ok(survey.has(`${dir}/comes-and-goes`));
          }
        } finally {
          await exec(`touch ${at(`${dir}/stop`)}`);
          await churn;
        }
      });

      it('what berth may not look at is unreadable, with the reason', { skip }, async (t) => {
        const { unprivileged } = subject;
        if (!unprivileged) {
          t.skip('this machine runs as root here, and root may look everywhere');
          return;
        }
        const dir = fresh();
        await exec(
          `mkdir -p ${at(`${dir}/closed`)} && echo s > ${at(`${dir}/closed/secret`)} && echo s > ${at(`${dir}/private`)} && chmod 0700 ${at(`${dir}/closed`)} && chmod 0600 ${at(`${dir}/private`)} && chown 0:0 ${at(`${dir}/closed`)} ${at(`${dir}/private`)}`,
        );
        const survey = await unprivileged.survey([
          { path: `${dir}/closed/secret`, read: true },
          { path: `${dir}/closed` },
          { path: `${dir}/private`, read: true },
        ]);
        assert.deepEqual(survey.get(`${dir}/closed/secret`), {
          kind: 'unreadable',
          reason: 'permission denied',
        });
        assert.deepEqual(survey.get(`${dir}/closed`), {
          kind: 'unreadable',
          reason: 'permission denied',
        });
        assert.deepEqual(survey.get(`${dir}/private`), {
          kind: 'unreadable',
          reason: 'permission denied',
        });
      });

      it('paths with spaces, quotes, dollars and newlines are taken as they are', {
        skip,
      }, async () => {
        const dir = fresh();
        const odd = [`${dir}/a b`, `${dir}/it's`, `${dir}/$HOME`, `${dir}/new\nline`, `${dir}/-x`];
        await exec(
          `mkdir -p ${at(dir)} && ${odd.map((path) => `printf %s ${q(path)} > ${at(path)}`).join(' && ')}`,
        );
        const survey = await machine.survey(odd.map((path) => ({ path, read: true })));
        for (const path of odd) {
          const facts = survey.get(path);
          assert.ok(facts?.kind === 'file', `${JSON.stringify(path)} is a file`);
          assert.equal(text(facts.bytes), path);
        }
      });

      it('answers forty paths at once, twenty of them read', { skip }, async () => {
        const dir = fresh();
        await exec(
          `mkdir -p ${at(dir)} && for i in $(seq 1 20); do echo "file $i" > ${at(dir)}/f$i; done`,
        );
        const paths = Array.from({ length: 40 }, (_, index) =>
          index < 20 ? { path: `${dir}/f${index + 1}`, read: true } : { path: `${dir}/m${index}` },
        );
        const survey = await machine.survey(paths);
        assert.equal(survey.size, 40);
        for (let index = 0; index < 20; index++) {
          const facts = survey.get(`${dir}/f${index + 1}`);
          assert.ok(facts?.kind === 'file');
          assert.equal(text(facts.bytes), `file ${index + 1}\n`);
        }
        for (let index = 20; index < 40; index++) {
          assert.deepEqual(survey.get(`${dir}/m${index}`), { kind: 'missing' });
        }
      });
    });

    describe('apply: a file', () => {
      it('makes the directories above the file, then the file with its bytes', {
        skip,
      }, async () => {
        const path = `${fresh()}/deep/er/app.env`;
        await write(machine, path, bytesOf('A=1\n'), { mode: 0o644 });
        assert.equal(await exec(`cat ${at(path)}`), 'A=1\n');
      });

      it('makes the directories above the file as a directory change makes them', {
        skip,
      }, async () => {
        const dir = fresh();
        await write(machine, `${dir}/by-write/deeper/file`, bytesOf('x'), { mode: 0o600 });
        await makeDirectory(machine, `${dir}/by-make/deeper`);
        const modes = await exec(
          `stat -c %a ${at(`${dir}/by-write`)} ${at(`${dir}/by-write/deeper`)} ${at(`${dir}/by-make`)} ${at(`${dir}/by-make/deeper`)}`,
        );
        const [byWrite, writeDeeper, make, makeDeeper] = modes.trim().split('\n');
        assert.deepEqual([byWrite, writeDeeper], [make, makeDeeper]);
        assert.equal((await exec(`stat -c %a ${at(`${dir}/by-write/deeper/file`)}`)).trim(), '600');
      });

      it('gives the file its mode and owner, whatever the umask', { skip }, async () => {
        const dir = fresh();
        await write(machine, `${dir}/secret`, bytesOf('s3cret'), {
          mode: 0o640,
          uid: owner.uid,
          gid: owner.gid,
        });
        await write(machine, `${dir}/open`, bytesOf('x'), { mode: 0o755 });
        assert.equal(
          (await exec(`stat -c '%a %u %g' ${at(`${dir}/secret`)}`)).trim(),
          `640 ${owner.uid} ${owner.gid}`,
        );
        assert.equal((await exec(`stat -c %a ${at(`${dir}/open`)}`)).trim(), '755');
        const facts = await one(`${dir}/secret`, true);
        assert.deepEqual(facts, {
          kind: 'file',
          size: 6,
          mode: '0640',
          uid: owner.uid,
          gid: owner.gid,
          bytes: bytesOf('s3cret'),
        });
      });

      it('replaces a file whole, by a rename: the old file lives on only under another link', {
        skip,
      }, async () => {
        const dir = fresh();
        const path = `${dir}/app.conf`;
        await write(machine, path, bytesOf('old\n'), { mode: 0o644 });
        await exec(`ln ${at(path)} ${at(`${dir}/keep`)}`);
        await write(machine, path, bytesOf('new\n'), { mode: 0o600 });
        assert.equal(await exec(`cat ${at(path)}`), 'new\n');
        assert.equal(await exec(`cat ${at(`${dir}/keep`)}`), 'old\n', 'not rewritten in place');
        assert.equal(
          (await exec(`ls -A ${at(dir)} | sort`)).trim(),
          'app.conf\nkeep',
          'no temporary file left',
        );
      });

      it('replaces a symbolic link at the path, never writing through it', { skip }, async () => {
        const dir = fresh();
        await exec(
          `mkdir -p ${at(`${dir}/elsewhere`)} && echo theirs > ${at(`${dir}/target`)} && ln -s target ${at(`${dir}/to-file`)} && ln -s elsewhere ${at(`${dir}/to-dir`)}`,
        );
        await write(machine, `${dir}/to-file`, bytesOf('ours\n'), { mode: 0o600 });
        await write(machine, `${dir}/to-dir`, bytesOf('ours\n'), { mode: 0o600 });
        assert.equal(await exec(`cat ${at(`${dir}/target`)}`), 'theirs\n');
        assert.equal((await exec(`ls -A ${at(`${dir}/elsewhere`)}`)).trim(), '');
        for (const name of ['to-file', 'to-dir']) {
          assert.equal((await exec(`stat -c %F ${at(`${dir}/${name}`)}`)).trim(), 'regular file');
          assert.equal(await exec(`cat ${at(`${dir}/${name}`)}`), 'ours\n');
        }
      });

      it('writes empty files, and bytes of every value', { skip }, async () => {
        const dir = fresh();
        await write(machine, `${dir}/empty`, new Uint8Array(), { mode: 0o644 });
        const all = new Uint8Array(256).map((_, index) => 255 - index);
        await write(machine, `${dir}/all`, all, { mode: 0o644 });
        assert.equal((await exec(`stat -c %s ${at(`${dir}/empty`)}`)).trim(), '0');
        assert.equal(
          (await exec(`od -An -tx1 -v ${at(`${dir}/all`)} | tr -d ' \\n'`)).trim(),
          Buffer.from(all).toString('hex'),
        );
      });

      it("removes a dead write's temporary files of that file, and nothing that only looks like one", {
        skip,
      }, async () => {
        const dir = fresh();
        const dead = ['.app.conf.0123456789ab.tmp', '.app.conf.fedcba987654.tmp'];
        const kept = [
          '.app.conf.0123456789a.tmp', // eleven digits
          '.app.conf.0123456789AB.tmp', // not lower-case hex
          '.app.conf.0123456789abc.tmp', // thirteen
          '.other.conf.0123456789ab.tmp', // another file's
          'app.conf.0123456789ab.tmp', // no leading dot
          '.app.conf.0123456789ab.tmp.bak',
        ];
        await exec(
          `mkdir -p ${at(dir)} && cd ${at(dir)} && touch ${[...dead, ...kept].map(q).join(' ')}`,
        );
        await write(machine, `${dir}/app.conf`, bytesOf('x'), { mode: 0o644 });
        const left = (await exec(`ls -A ${at(dir)}`)).trim().split('\n').sort();
        assert.deepEqual(left, ['app.conf', ...kept].sort());
      });

      it('fails with a MachineError where a directory stands at the path', { skip }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(`${dir}/taken`)}`);
        await assert.rejects(
          write(machine, `${dir}/taken`, bytesOf('x'), { mode: 0o644 }),
          (error) => {
            assert.ok(error instanceof MachineError);
            assert.notEqual(error.failure, 'unreachable');
            return true;
          },
        );
        assert.equal((await exec(`ls -A ${at(dir)}`)).trim(), 'taken', 'no temporary file left');
      });
    });

    describe('apply: a directory', () => {
      it('makes a directory and its parents, and leaves an existing one as it is', {
        skip,
      }, async () => {
        const dir = `${fresh()}/a/b/c`;
        await makeDirectory(machine, dir);
        await exec(`chmod 0700 ${at(dir)} && touch ${at(`${dir}/inside`)}`);
        await makeDirectory(machine, dir);
        assert.equal((await exec(`stat -c %a ${at(dir)}`)).trim(), '700');
        assert.equal((await exec(`ls ${at(dir)}`)).trim(), 'inside');
      });

      it('fails with a MachineError where a file stands at the path', { skip }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(dir)} && touch ${at(`${dir}/file`)}`);
        await assert.rejects(makeDirectory(machine, `${dir}/file`), MachineError);
      });
    });

    describe('apply: a batch', () => {
      const file = (path: string, content: string, options: WriteOptions = { mode: 0o644 }) =>
        ({ kind: 'file', path, data: bytesOf(content), options }) as const;
      const directory = (path: string, options: DirectoryOptions = {}) =>
        ({ kind: 'directory', path, options }) as const;
      /** Each path's kind, mode and owner as `stat` says them; `missing` where nothing is. */
      const stats = async (paths: string[]) =>
        (
          await exec(
            paths
              .map((path) => `stat -c '%F %a %u %g' ${at(path)} 2>/dev/null || echo missing`)
              .join('; '),
          )
        )
          .trim()
          .split('\n');

      it('makes every change, in order, each with the mode and owner asked for', {
        skip,
      }, async () => {
        const dir = fresh();
        const ids = `${owner.uid} ${owner.gid}`;
        const applied = await machine.apply([
          directory(`${dir}/data`, { mode: 0o750, ...owner }),
          file(`${dir}/etc/app.conf`, 'port=3000\n', { mode: 0o640, ...owner }),
          file(`${dir}/etc/secret`, 's3cret', { mode: 0o600 }),
          directory(`${dir}/data/sub`, { mode: 0o700 }),
          file(`${dir}/data/sub/state`, ''),
          directory(`${dir}/plain`),
        ]);
        assert.deepEqual(applied, { done: 6 });
        assert.deepEqual(
          await stats([
            `${dir}/data`,
            `${dir}/etc/app.conf`,
            `${dir}/etc/secret`,
            `${dir}/data/sub`,
            `${dir}/data/sub/state`,
          ]),
          [
            `directory 750 ${ids}`,
            `regular file 640 ${ids}`,
            `regular file 600 ${rootUid} ${rootUid === 0 ? 0 : owner.gid}`,
            `directory 700 ${rootUid} ${rootUid === 0 ? 0 : owner.gid}`,
            `regular empty file 644 ${rootUid} ${rootUid === 0 ? 0 : owner.gid}`,
          ],
        );
        assert.equal(await exec(`cat ${at(`${dir}/etc/app.conf`)}`), 'port=3000\n');
        assert.equal(await exec(`cat ${at(`${dir}/etc/secret`)}`), 's3cret');
        assert.equal((await exec(`ls -A ${at(`${dir}/etc`)}`)).trim(), 'app.conf\nsecret');
      });

      it('keeps the order: a later change is made over an earlier one', { skip }, async () => {
        const dir = fresh();
        const applied = await machine.apply([
          file(`${dir}/twice`, 'first\n'),
          file(`${dir}/made/by-write`, 'x'),
          directory(`${dir}/made`, { mode: 0o700 }),
          file(`${dir}/twice`, 'second\n', { mode: 0o600 }),
        ]);
        assert.deepEqual(applied, { done: 4 });
        assert.equal(await exec(`cat ${at(`${dir}/twice`)}`), 'second\n');
        assert.equal((await exec(`stat -c %a ${at(`${dir}/twice`)}`)).trim(), '600');
        assert.equal((await exec(`stat -c %a ${at(`${dir}/made`)}`)).trim(), '700');
        assert.equal(
          (await exec(`ls -A ${at(dir)}`)).trim(),
          'made\ntwice',
          'no temporary file left',
        );
      });

      it('stops at the first change that fails: those before it made, none after, the failure in words', {
        skip,
      }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(`${dir}/taken`)}`);
        const applied = await machine.apply([
          directory(`${dir}/before`),
          file(`${dir}/a`, 'a'),
          file(`${dir}/b`, 'b'),
          file(`${dir}/taken`, 'x'),
          file(`${dir}/c`, 'c'),
          directory(`${dir}/after`),
        ]);
        assert.equal(applied.done, 3);
        assert.ok(applied.failure instanceof MachineError);
        assert.equal(applied.failure.failure, 'failed');
        assert.match(applied.failure.message, new RegExp(`^write ${dir}/taken failed: .+`));
        assert.equal(await exec(`cat ${at(`${dir}/a`)} ${at(`${dir}/b`)}`), 'ab');
        assert.equal(
          (await exec(`ls -A ${at(dir)}`)).trim(),
          'a\nb\nbefore\ntaken',
          'nothing after it, and no temporary file left',
        );
        assert.equal((await exec(`ls -A ${at(`${dir}/taken`)}`)).trim(), '');
      });

      it('stops at a directory that cannot be made, the files before it made', {
        skip,
      }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(dir)} && touch ${at(`${dir}/file`)}`);
        const applied = await machine.apply([
          file(`${dir}/a`, 'a'),
          file(`${dir}/b`, 'b'),
          directory(`${dir}/file/under`),
          file(`${dir}/c`, 'c'),
        ]);
        assert.equal(applied.done, 2);
        assert.ok(applied.failure instanceof MachineError);
        assert.notEqual(applied.failure.failure, 'unreachable');
        assert.match(applied.failure.message, new RegExp(`^create ${dir}/file/under failed: .+`));
        assert.equal((await exec(`ls -A ${at(dir)}`)).trim(), 'a\nb\nfile');
      });

      it('stops at a change it may not make as asked (a path outside the machine’s)', {
        skip,
      }, async () => {
        const dir = fresh();
        const applied = await machine.apply([
          file(`${dir}/a`, 'a'),
          file('/../escaped', 'x'),
          file(`${dir}/c`, 'c'),
        ]);
        assert.equal(applied.done, 1);
        assert.ok(applied.failure instanceof MachineError);
        assert.equal(applied.failure.failure, 'failed');
        assert.match(applied.failure.message, /\/\.\.\/escaped/);
        assert.equal((await exec(`ls -A ${at(dir)}`)).trim(), 'a');
      });

      it('writes thirty files whole, sweeping dead writes’ temporary files, leaving none of its own', {
        skip,
      }, async () => {
        const dir = fresh();
        await exec(
          `mkdir -p ${at(dir)} && touch ${at(`${dir}/.f1.0123456789ab.tmp`)} ${at(`${dir}/.f30.fedcba987654.tmp`)}`,
        );
        const names = Array.from({ length: 30 }, (_, index) => `f${index + 1}`);
        const applied = await machine.apply(
          names.map((name) => file(`${dir}/${name}`, `${name}\n`.repeat(100), { mode: 0o600 })),
        );
        assert.deepEqual(applied, { done: 30 });
        assert.deepEqual((await exec(`ls -A ${at(dir)}`)).trim().split('\n').sort(), names.sort());
        for (const name of names)
          assert.equal(await exec(`cat ${at(`${dir}/${name}`)}`), `${name}\n`.repeat(100));
      });

      it('an empty batch is done at once', { skip }, async () => {
        assert.deepEqual(await machine.apply([]), { done: 0 });
      });
    });

    describe('run', () => {
      it('gives the exit code and keeps the output, errors included', { skip }, async () => {
        const result = await machine.run('echo out; echo err >&2; exit 3', {});
        assert.equal(result.code, 3);
        assert.match(result.output, /out/);
        assert.match(result.output, /err/);
        assert.equal((await machine.run('true', {})).code, 0);
      });

      it('extends the environment by env and BERTH_ROOT', { skip }, async () => {
        const result = await machine.run(
          'printf "%s|%s|%s|%s" "$BERTH_NODE" "$BERTH_MODULE" "$BERTH_ROOT" "$PATH"',
          { BERTH_NODE: 'web1', BERTH_MODULE: "it's a $module" },
        );
        const [node, module, root, path] = result.output.split('|');
        assert.equal(node, 'web1');
        assert.equal(module, "it's a $module");
        assert.equal(root, subject.root);
        assert.ok(path, 'the usual environment is there too');
      });

      it('runs the hook in a process group of its own', { skip }, async () => {
        const result = await machine.run('cut -d" " -f5 /proc/$$/stat; echo $$', {});
        const [group, pid] = result.output.split('\n');
        assert.equal(group, pid);
      });

      it('tells the output as it comes', { skip }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(dir)}`);
        const go = `"$BERTH_ROOT"${q(`${dir}/go`)}`;
        let told = '';
        const finished = machine.run(
          `echo first; i=0; while [ ! -e ${go} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; echo second`,
          {},
          {
            output: (chunk) => {
              told += chunk;
              if (told.includes('first')) void exec(`touch ${at(`${dir}/go`)}`);
            },
          },
        );
        const result = await finished;
        assert.equal(result.code, 0);
        assert.match(told, /^first\n(.|\n)*second\n$/);
        assert.equal(
          (await exec(`ls ${at(dir)}`)).trim(),
          'go',
          'the hook waited for "first" to be told',
        );
        assert.equal(result.output, 'first\nsecond');
      });

      it('keeps only the end of a long output', { skip }, async () => {
        // Some 100,000 characters: more than a machine keeps.
        const result = await machine.run(
          'i=0; while [ $i -lt 10000 ]; do echo "line $i"; i=$((i+1)); done; echo last',
          {},
        );
        assert.ok(
          result.output.length <= RAW_OUTPUT_KEPT,
          `${result.output.length} characters kept`,
        );
        assert.match(result.output, /line 9999\nlast$/);
      });

      it('is done when its shell exits, though a daemon it started holds the output', {
        skip,
      }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(dir)}`);
        const pidFile = `"$BERTH_ROOT"${q(`${dir}/daemon.pid`)}`;
        try {
          const result = await machine.run(`sleep 30 & echo $! > ${pidFile}; echo started`, {});
          assert.equal(result.code, 0);
          assert.equal(result.output, 'started');
          const daemon = await exec(`kill -0 $(cat ${at(`${dir}/daemon.pid`)}) && echo running`);
          assert.equal(daemon.trim(), 'running', "done before the daemon's end, not after it");
        } finally {
          await exec(`kill $(cat ${at(`${dir}/daemon.pid`)}) 2>/dev/null; true`);
        }
      });

      /**
       * Runs `background` (what the hook starts before it says it is up), stops the hook as
       * soon as it is up, and checks that nothing of its process group is left.
       */
      const stopOnceUp = async (background: string): Promise<RunResult> => {
        const dir = fresh();
        await exec(`mkdir -p ${at(dir)}`);
        const stop = new AbortController();
        const marker = `berth-contract-${randomBytes(4).toString('hex')}`;
        const running = machine.run(
          `${background} echo "$$" > "$BERTH_ROOT"${q(`${dir}/group`)}; echo ${marker}; wait`,
          {},
          {
            signal: stop.signal,
            output: (chunk) => {
              if (chunk.includes(marker)) stop.abort();
            },
          },
        );
        const result: RunResult = await Promise.race([
          running,
          new Promise<never>((_, fail) =>
            setTimeout(
              () => fail(new Error('the hook was not stopped within 20 s')),
              20_000,
            ).unref(),
          ),
        ]);
        assert.notEqual(result.code, 0);
        assert.match(result.output, /stopped by berth$/);
        assert.equal(result.stopped, 'berth');
        await noneLeftOf(dir);
        return result;
      };

      /** Nothing is left of the process group whose id the hook wrote to `dir`/group. */
      const noneLeftOf = async (dir: string) => {
        const group = (await exec(`cat ${at(`${dir}/group`)}`)).trim();
        assert.match(group, /^\d+$/);
        // Stopping may take a moment on the far side; nothing of the group may stay.
        const living = `ps -eo pgid=,stat=,args= | awk -v g=${group} '$1 == g && $2 !~ /^Z/'`;
        let left = '';
        for (let tries = 0; tries < 50; tries++) {
          left = (await exec(living)).trim();
          if (!left) break;
          await new Promise((wake) => setTimeout(wake, 100));
        }
        assert.equal(left, '', 'no process of the hook is left');
      };

      it('a hook past its deadline is stopped, its whole group, though it ignores SIGTERM', {
        skip,
      }, async () => {
        const dir = fresh();
        await exec(`mkdir -p ${at(dir)}`);
        const began = performance.now();
        const result = await machine.run(
          `trap '' TERM; echo "$$" > "$BERTH_ROOT"${q(`${dir}/group`)}; echo up; sleep 300 & sleep 301`,
          {},
          { deadlineMs: 1_000 },
        );
        const took = performance.now() - began;
        assert.equal(result.stopped, 'deadline');
        assert.equal(result.output, 'up\nstopped by berth: its 1s deadline passed');
        assert.ok(took >= 1_000 && took < 10_000, `stopped after ${took} ms`);
        await noneLeftOf(dir);
      });

      it('an abort stops the hook and everything in its process group', { skip }, async () => {
        const result = await stopOnceUp('sleep 300 & sleep 301 & (sleep 302; echo never) &');
        assert.doesNotMatch(result.output, /never/);
      });

      it('a hook that ignores SIGTERM is killed, its whole group, soon after', {
        skip,
      }, async () => {
        // `trap '' TERM` is inherited: the hook's shell and its sleeps all ignore SIGTERM.
        await stopOnceUp("trap '' TERM; sleep 300 & sleep 301 &");
      });
    });

    hostileContract(
      {
        machine: () => machine,
        exec,
        at,
        root: () => subject.root,
        fresh,
      },
      skip,
    );

    describe('a machine that cannot be reached', () => {
      it('refuses every act with MachineError unreachable, in words', { skip }, async () => {
        const { unreachable } = subject;
        await assert.rejects(unreachable.survey([]), isUnreachable);
        await assert.rejects(
          unreachable.survey([{ path: '/etc/hostname', read: true }]),
          isUnreachable,
        );
        await assert.rejects(
          write(unreachable, `${base}/x`, bytesOf('x'), { mode: 0o600 }),
          isUnreachable,
        );
        await assert.rejects(makeDirectory(unreachable, `${base}/d`), isUnreachable);
        const applied = await unreachable.apply([
          { kind: 'directory', path: `${base}/d` },
          { kind: 'file', path: `${base}/x`, data: bytesOf('x'), options: { mode: 0o600 } },
        ]);
        assert.equal(applied.done, 0);
        isUnreachable(applied.failure);
        await assert.rejects(unreachable.run('true', {}), isUnreachable);
      });
    });
  });
}
