/**
 * The Machine contract with a hostile party in it (docs/safety.md): a user who owns a directory on the node, as a service's user owns its data
 * directory, places links there and races berth. Whatever the machine, berth never reads,
 * writes, chowns or chmods through a link that user could have placed; links only root
 * could have placed are still followed; hooks see none of berth's own environment.
 *
 * The attacker's commands run as that user (setpriv); links point by relative paths, so
 * that the same case means the same files on a machine reached over ssh (root `/`) and
 * under a rooted machine's root.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  linkWords,
  type Machine,
  MachineError,
  type PathFacts,
} from '../../src/machines/machine.ts';
import { makeDirectory, q, write } from './contract.ts';

/** What the contract lends this suite of the machine under test. */
export interface HostilePlace {
  machine(): Machine;
  /** Runs a shell script as root where the machine's files are. */
  exec(script: string): Promise<string>;
  /** A machine path as exec sees it, q for its shell. */
  at(path: string): string;
  /** The machine's root as exec sees it (`/` over ssh). */
  root(): string;
  /** A fresh machine path of a directory that does not exist yet. */
  fresh(): string;
}

/**
 * The attacker: an ordinary user, made for this test process and removed after it, so that
 * test files running side by side never share one and none is left on the machine.
 */
const HOSTILE = `berth-hostile-${process.pid}`;
const bytesOf = (value: string) => new TextEncoder().encode(value);

export function hostileContract(place: HostilePlace, skip?: string) {
  describe('a hostile user who owns a directory on the node', () => {
    const { exec, at, fresh } = place;
    let hostile = { uid: -1, gid: -1 };
    /** The link fact of a path the attacker placed a symbolic link at. */
    const theirLink = (path: string): PathFacts => ({
      kind: 'link',
      at: path,
      uid: hostile.uid,
      owner: HOSTILE,
    });

    /** Making the attacker takes root where the machine's files are. */
    let asRoot = false;
    /** A case with the attacker in it: skipped where exec is not root. */
    const hostileCase = (name: string, body: () => Promise<void>) =>
      it(name, { skip }, async (t) => {
        if (!asRoot) {
          t.skip('needs root where the machine’s files are, to make another user');
          return;
        }
        await body();
      });

    before(async () => {
      if (skip) return;
      asRoot = (await exec('id -u')).trim() === '0';
      if (!asRoot) return;
      // Test files run side by side and useradd locks /etc/passwd: try again on a clash.
      await exec(
        `for i in 1 2 3 4 5 6 7 8 9 10; do id -u ${HOSTILE} >/dev/null 2>&1 && break; useradd --no-create-home --shell /usr/sbin/nologin --password '*' ${HOSTILE} 2>/dev/null || sleep 0.5; done`,
      );
      hostile = {
        uid: Number((await exec(`id -u ${HOSTILE}`)).trim()),
        gid: Number((await exec(`id -g ${HOSTILE}`)).trim()),
      };
      if (place.root() !== '/') {
        // A rooted machine names owners from its root's own accounts; the attacker must
        // reach its directory through the root as any user walks to theirs.
        await exec(
          `mkdir -p ${at('/etc')} && getent passwd root ${HOSTILE} >> ${at('/etc/passwd')} && chmod o+x ${q(place.root())}`,
        );
      }
    });

    after(async () => {
      if (!asRoot) return;
      await exec(
        `for i in 1 2 3 4 5 6 7 8 9 10; do id -u ${HOSTILE} >/dev/null 2>&1 || break; userdel ${HOSTILE} 2>/dev/null || sleep 0.5; done`,
      );
    });

    /** A directory the attacker owns, and a root-only one beside it with a secret inside. */
    const stage = async () => {
      const dir = fresh();
      const mine = `${dir}/srv`;
      const victim = `${dir}/victim`;
      await exec(
        `mkdir -p ${at(mine)} ${at(victim)} && chown ${hostile.uid}:${hostile.gid} ${at(mine)} && chmod 0755 ${at(dir)} ${at(mine)} && chmod 0700 ${at(victim)} && printf 'root only\\n' > ${at(`${victim}/secret`)} && chmod 0600 ${at(`${victim}/secret`)}`,
      );
      return { dir, mine, victim };
    };
    /** Runs the attacker's script as the attacker, in their directory. */
    const asHostile = (mine: string, script: string) =>
      exec(
        `setpriv --reuid=${hostile.uid} --regid=${hostile.gid} --clear-groups sh -c ${q(`cd ${at(mine)} && ${script}`)}`,
      );
    /** What must never change of a root-only path: kind, mode, owner, links, and bytes. */
    const looks = (path: string) =>
      exec(
        `stat -c '%F %a %u %g %h %s' ${at(path)}; if [ -d ${at(path)} ]; then ls -A ${at(path)}; else cat ${at(path)}; fi`,
      );
    const one = async (path: string): Promise<PathFacts | undefined> =>
      (await place.machine().survey([{ path, read: true }])).get(path);
    const refusedFor = (path: string, link: string) => (error: unknown) => {
      assert.ok(error instanceof MachineError, `a MachineError, not ${String(error)}`);
      assert.equal(error.failure, 'denied');
      assert.equal(error.message, linkWords(path, { at: link, uid: hostile.uid, owner: HOSTILE }));
      return true;
    };

    hostileCase(
      'a data directory swapped for a link to a root-only directory: survey says link, the change is refused, nothing chowned',
      async () => {
        const { mine, victim } = await stage();
        const before = await looks(victim);
        await asHostile(mine, 'ln -s ../victim data');
        const data = `${mine}/data`;
        assert.deepEqual(await one(data), theirLink(data));
        await assert.rejects(
          makeDirectory(place.machine(), data, { mode: 0o750, ...hostile }),
          refusedFor(data, data),
        );
        assert.equal(await looks(victim), before);
      },
    );

    hostileCase(
      'a file written a few hundred times while the attacker swaps links onto its temporary files and its directory: the victim never changes',
      async () => {
        const { mine, victim } = await stage();
        await asHostile(mine, 'mkdir conf');
        const before = await looks(`${victim}/secret`);
        const beforeDir = await looks(victim);
        // Until `stop` appears: a link to the victim renamed onto every temporary name of
        // app.ini (and one a dead write would have left), and `conf` swapped for a link to
        // the victim's directory for a moment, then back. A `conf` berth made while it was
        // away is moved aside, so that the attack goes on.
        const attack = asHostile(
          mine,
          `i=0; end=$(($(date +%s) + 50)); while [ ! -e stop ] && [ $(date +%s) -lt $end ]; do i=$((i+1));
          if [ -d held ]; then mv -T conf junk$i 2>/dev/null; mv -T held conf 2>/dev/null; fi;
          ln -sfn ../../victim/secret conf/.app0.ini.0123456789ab.tmp 2>/dev/null;
          for t in conf/.app*.ini.*.tmp; do ln -sfn ../../victim/secret .l && mv -fT .l "$t" 2>/dev/null; done;
          if mv -T conf held 2>/dev/null; then
            ln -sfn ../victim .d && mv -fT .d conf 2>/dev/null && sleep 0.03;
            rm -f conf 2>/dev/null;
            mv -T held conf 2>/dev/null;
          fi;
        done; true`,
        );
        const refusals = new Set<string>();
        try {
          // Three hundred writes, ten files a batch: over ssh a batch is one round trip, and
          // the attacker (bounded at 50 s, under the fleet's limit on a command) races them all.
          for (let round = 0; round < 30; round++) {
            const applied = await place.machine().apply(
              Array.from({ length: 10 }, (_, file) => ({
                kind: 'file' as const,
                path: `${mine}/conf/app${file}.ini`,
                data: bytesOf(`round ${round}\n`),
                options: { mode: 0o644, ...hostile },
              })),
            );
            if (applied.failure) {
              assert.notEqual(applied.failure.failure, 'unreachable', applied.failure.message);
              refusals.add(applied.failure.message);
            }
          }
        } finally {
          await exec(`touch ${at(`${mine}/stop`)}`);
          await attack;
        }
        assert.equal(await looks(`${victim}/secret`), before, 'the victim file is as it was');
        assert.equal(await looks(victim), beforeDir, 'nothing new beside it');
        // On a loaded machine the attacker may win every round, so that nothing is written
        // while it races: then the refusals must be the race's, and once it has stopped the
        // same batch must go through, so that the case cannot pass by refusing everything.
        for (const refusal of refusals) assert.match(refusal, /app\d\.ini/, refusal);
        await exec(
          `rm -rf ${at(`${mine}/conf`)} && mkdir ${at(`${mine}/conf`)} && chown ${hostile.uid}:${hostile.gid} ${at(`${mine}/conf`)}`,
        );
        const after = await place.machine().apply(
          Array.from({ length: 10 }, (_, file) => ({
            kind: 'file' as const,
            path: `${mine}/conf/app${file}.ini`,
            data: bytesOf('after the race\n'),
            options: { mode: 0o644, ...hostile },
          })),
        );
        assert.equal(after.failure, undefined, after.failure?.message);
        assert.equal(after.done, 10);
        assert.equal(
          await exec(
            `stat -c '%F %a %u' ${at(`${mine}/conf/app9.ini`)}; cat ${at(`${mine}/conf/app9.ini`)}`,
          ),
          `regular file 644 ${hostile.uid}\nafter the race\n`,
        );
      },
    );

    hostileCase(
      'a secret that is a link to a root-only file: survey says link, and brings no bytes',
      async () => {
        const { mine } = await stage();
        await asHostile(mine, 'ln -s ../victim/secret key');
        assert.deepEqual(await one(`${mine}/key`), theirLink(`${mine}/key`));
      },
    );

    hostileCase(
      'a directory above a file swapped for a link to a root directory: the write and the directory are refused, nothing made there',
      async () => {
        const { dir, mine } = await stage();
        const rooted = `${dir}/etc`;
        await exec(`mkdir -p ${at(rooted)} && chmod 0755 ${at(rooted)}`);
        await asHostile(mine, 'ln -s ../etc conf && mkdir a && ln -s ../../etc a/b');
        const file = `${mine}/conf/app.ini`;
        await assert.rejects(
          write(place.machine(), file, bytesOf('x'), { mode: 0o644, ...hostile }),
          refusedFor(file, `${mine}/conf`),
        );
        const deeper = `${mine}/a/b/c/app.ini`;
        await assert.rejects(
          write(place.machine(), deeper, bytesOf('x'), { mode: 0o644 }),
          refusedFor(deeper, `${mine}/a/b`),
        );
        await assert.rejects(
          makeDirectory(place.machine(), `${mine}/conf/sub`, { mode: 0o700 }),
          refusedFor(`${mine}/conf/sub`, `${mine}/conf`),
        );
        assert.deepEqual(await one(file), theirLink(`${mine}/conf`));
        assert.equal((await exec(`ls -A ${at(rooted)}`)).trim(), '', 'nothing written there');
      },
    );

    hostileCase(
      'a hard link to a root-only file in the user’s directory is a link, hard, and brings no bytes',
      async () => {
        const { mine, victim } = await stage();
        // Where fs.protected_hardlinks is off the user makes this link; root stands in here.
        await exec(`ln ${at(`${victim}/secret`)} ${at(`${mine}/key`)}`);
        assert.deepEqual(await one(`${mine}/key`), {
          kind: 'link',
          at: `${mine}/key`,
          uid: 0,
          owner: 'root',
          hard: true,
        });
      },
    );

    it('a hook’s environment holds none of berth’s own variables', { skip }, async () => {
      const secrets = {
        PGPASSWORD: 'pg-secret-berth-hostile',
        BERTH_STORE: 'postgres://berth:store-secret@db/berth',
        BERTH_TOKEN: 'token-secret-berth-hostile',
      };
      const kept = Object.fromEntries(
        Object.keys(secrets).map((name) => [name, process.env[name]]),
      );
      Object.assign(process.env, secrets);
      let result: Awaited<ReturnType<Machine['run']>>;
      try {
        result = await place.machine().run('env', { BERTH_NODE: 'web1', BERTH_MODULE: 'app' });
      } finally {
        for (const [name, value] of Object.entries(kept)) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
      assert.equal(result.code, 0);
      const names = result.output
        .split('\n')
        .map((line) => /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(line)?.[1])
        .filter((name) => name !== undefined)
        .sort();
      const allowed = ['BERTH_MODULE', 'BERTH_NODE', 'BERTH_ROOT', 'HOME', 'LANG', 'PATH'];
      // What the hook's own shell adds of itself.
      const shells = ['OLDPWD', 'PWD', 'SHLVL', '_'];
      assert.deepEqual(
        names.filter((name) => !shells.includes(name)),
        allowed,
        result.output,
      );
      for (const value of Object.values(secrets)) assert.ok(!result.output.includes(value));
    });

    hostileCase(
      'links root placed are still followed, inside the machine’s root however they are spelled',
      async () => {
        const dir = fresh();
        await exec(
          `mkdir -p ${at(`${dir}/real`)} && chmod 0755 ${at(dir)} ${at(`${dir}/real`)} && printf 'honest\\n' > ${at(`${dir}/real/app.conf`)} && cd ${at(dir)} && ln -s real via && ln -s ${q(`${dir}/real/app.conf`)} absolute && ln -s ${q(`../../../../../../../../../..${dir}/real/app.conf`)} climbing`,
        );
        for (const path of [`${dir}/via/app.conf`, `${dir}/absolute`, `${dir}/climbing`]) {
          const facts = await one(path);
          assert.ok(facts?.kind === 'file', `${path} is read through root's link`);
          assert.equal(new TextDecoder().decode(facts.bytes), 'honest\n');
        }
        await write(place.machine(), `${dir}/via/new.conf`, bytesOf('new\n'), { mode: 0o600 });
        await makeDirectory(place.machine(), `${dir}/via/sub`, { mode: 0o710 });
        await makeDirectory(place.machine(), `${dir}/via`, { mode: 0o750 });
        assert.equal(await exec(`cat ${at(`${dir}/real/new.conf`)}`), 'new\n');
        assert.equal(
          (await exec(`stat -c %a ${at(`${dir}/real/sub`)} ${at(`${dir}/real`)}`)).trim(),
          '710\n750',
        );
      },
    );
  });
}
