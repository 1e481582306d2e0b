/** How berth reads apt's answers: the survey's lines and an install's output. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readAptInstall, readAptSurvey } from '../../src/packages/apt.ts';

const ASKS = [
  { module: 'web', packages: [{ name: 'nginx' }, { name: 'hello', version: '2.10-2' }] },
  { module: 'cache', packages: [{ name: 'redis-server' }] },
];

const ANSWER = `P apt 1764000000 1763900000
P status hello installed 2.10-3
P status nginx not-installed 
P status redis-server unknown -
| hello:
|   Installed: 2.10-3
|   Candidate: 2.10-3
|   Version table:
|  *** 2.10-3 500
|         500 http://deb.debian.org/debian bookworm/main amd64 Packages
|         100 /var/lib/dpkg/status
|      2.10-2 500
|         500 http://deb.debian.org/debian bullseye/main amd64 Packages
| nginx:
|   Installed: (none)
|   Candidate: 1.22.1-9+deb12u1
|   Version table:
|      1.22.1-9+deb12u1 500
|         500 http://deb.debian.org/debian bookworm/main amd64 Packages
P policy-end
P sim web
| NOTE: This is only a simulation!
| Inst hello [2.10-3] (2.10-2 Debian:11 [amd64])
| Inst libnginx-mod-stream (1.22.1-9+deb12u1 Debian:12.5/stable [amd64])
| Inst nginx (1.22.1-9+deb12u1 Debian:12.5/stable [amd64])
| Conf nginx (1.22.1-9+deb12u1 Debian:12.5/stable [amd64])
P archives
| Package: hello
| Version: 2.10-3
| SHA256: ${'a'.repeat(64)}
| Package: hello
| Version: 2.10-2
| SHA256: ${'b'.repeat(64)}
| Package: nginx
| Version: 1.22.1-9+deb12u1
| SHA256: ${'c'.repeat(64)}
| Package: nginx
| Version: 1.22.1-9+deb12u1
| SHA256: ${'d'.repeat(64)}
P sim-end 0
P sim cache
| Reading package lists...
| E: Unable to locate package redis-server
P sim-end 100`;

describe("apt's answers", () => {
  it('a survey: installed versions, candidates, what the lists offer, their age, and each simulation', () => {
    assert.deepEqual(readAptSurvey(ASKS, ANSWER.split('\n')), {
      manager: 'apt',
      packages: {
        hello: { installed: '2.10-3', candidate: '2.10-3', offered: ['2.10-3', '2.10-2'] },
        nginx: { candidate: '1.22.1-9+deb12u1', offered: ['1.22.1-9+deb12u1'] },
        'redis-server': { offered: [] },
      },
      listsAge: 100000,
      simulations: {
        web: {
          ok: true,
          installs: [
            { package: 'hello', version: '2.10-2', from: '2.10-3' },
            { package: 'libnginx-mod-stream', version: '1.22.1-9+deb12u1' },
            { package: 'nginx', version: '1.22.1-9+deb12u1' },
          ],
          // The hashes of the versions it installs, from every source that offers them.
          archives: {
            'hello=2.10-2': ['b'.repeat(64)],
            'libnginx-mod-stream=1.22.1-9+deb12u1': [],
            'nginx=1.22.1-9+deb12u1': ['c'.repeat(64), 'd'.repeat(64)],
          },
        },
        cache: { ok: false, errors: ['E: Unable to locate package redis-server'] },
      },
    });
  });

  it("apt's own lists of what an install would do (apt before 2.9): what it installs, upgrades and downgrades, nothing it only suggests", () => {
    const asks = [
      { module: 'web', packages: [{ name: 'nginx' }, { name: 'hello', version: '2.10-2' }] },
    ];
    const listed = `P apt 1764000000 1763900000
P status hello installed 2.10-3
P status nginx not-installed 
P policy-end
P sim web
| Reading package lists...
| The following additional packages will be installed:
|    libnginx-mod-stream (1.22.1-9+deb12u1)
|    libssl3 (3.0.15-1~deb12u1)
| Suggested packages:
|    fcgiwrap (1.1.0-14)
| The following NEW packages will be installed:
|    libnginx-mod-stream (1.22.1-9+deb12u1)
|    nginx (1.22.1-9+deb12u1)
| The following packages will be upgraded:
|    libssl3 (3.0.11-1~deb12u2 => 3.0.15-1~deb12u1)
| The following packages will be DOWNGRADED:
|    hello (2.10-3 => 2.10-2)
| 1 upgraded, 2 newly installed, 1 downgraded, 0 to remove and 0 not upgraded.
| Need to get 0 B/1999 kB of archives.
| 'file:/srv/debs/./nginx_1.22.1-9+deb12u1_amd64.deb' nginx_1.22.1-9+deb12u1_amd64.deb 1000 SHA256:00
P sim-end 0`;
    const facts = readAptSurvey(asks, listed.split('\n'));
    assert.deepEqual(facts.manager === 'apt' && facts.simulations.web, {
      ok: true,
      installs: [
        { package: 'libnginx-mod-stream', version: '1.22.1-9+deb12u1' },
        { package: 'nginx', version: '1.22.1-9+deb12u1' },
        { package: 'libssl3', version: '3.0.15-1~deb12u1', from: '3.0.11-1~deb12u2' },
        { package: 'hello', version: '2.10-2', from: '2.10-3' },
      ],
      archives: {
        'hello=2.10-2': [],
        'libnginx-mod-stream=1.22.1-9+deb12u1': [],
        'libssl3=3.0.15-1~deb12u1': [],
        'nginx=1.22.1-9+deb12u1': [],
      },
    });
  });

  it('every package installed as asked: their versions, and neither the lists nor their age', () => {
    const asks = [{ module: 'web', packages: [{ name: 'nginx' }] }];
    const answer = [
      'P apt - -',
      'P status nginx installed 1.22.1-9',
      'P policy-end',
      'P sim web',
      'P sim-end 0',
    ];
    assert.deepEqual(readAptSurvey(asks, answer), {
      manager: 'apt',
      packages: { nginx: { installed: '1.22.1-9', offered: [] } },
      simulations: { web: { ok: true, installs: [] } },
    });
  });

  it("a name, version or hash not in Debian's grammar is said once, and used nowhere", () => {
    const asks = [{ module: 'web', packages: [{ name: 'nginx' }] }];
    const hostile = '1.0;id>/tmp/x;:';
    const answer = [
      'P apt 1764000000 1763900000',
      `P status nginx installed 1.0$(id)`,
      '| nginx:',
      `|   Candidate: ${hostile}`,
      '|   Version table:',
      `|      ${hostile} 500`,
      '|         500 file:/srv/debs ./ Packages',
      '|      1.22.1-9 500',
      '|         500 file:/srv/debs ./ Packages',
      'P policy-end',
      'P sim web',
      `| Inst nginx (${hostile} Debian:12.5/stable [amd64])`,
      '| Inst Lib;rm (1.0 Debian:12.5/stable [amd64])',
      '| Inst libssl3 (3.0.15-1 Debian:12.5/stable [amd64])',
      'P archives',
      '| Package: libssl3',
      '| Version: 3.0.15-1',
      '| SHA256: 00$(id)',
      'P sim-end 0',
    ];
    const facts = readAptSurvey(asks, answer);
    assert.equal(facts.manager, 'apt');
    if (facts.manager !== 'apt') return;
    assert.deepEqual(facts.packages, { nginx: { offered: ['1.22.1-9'] } });
    assert.deepEqual(facts.simulations.web, {
      ok: true,
      installs: [{ package: 'libssl3', version: '3.0.15-1' }],
      archives: { 'libssl3=3.0.15-1': [] },
    });
    assert.deepEqual(facts.malformed, [
      { package: 'nginx', what: 'version', value: '1.0$(id)' },
      { package: 'nginx', what: 'version', value: hostile },
      { module: 'web', package: 'nginx', what: 'version', value: hostile },
      { module: 'web', what: 'name', value: 'Lib;rm' },
      { module: 'web', package: 'libssl3', what: 'hash', value: '00$(id)' },
    ]);
  });

  it("berth's policy-rc.d, which a killed install left, is read, with the node's own kept aside", () => {
    const asks = [{ module: 'web', packages: [{ name: 'nginx' }] }];
    const answer = (held: string) => [
      'P apt - -',
      ...(held ? [held] : []),
      'P status nginx installed 1.22.1-9',
      'P policy-end',
      'P sim web',
      'P sim-end 0',
    ];
    const heldOf = (held: string) => {
      const facts = readAptSurvey(asks, answer(held));
      return facts.manager === 'apt' ? facts.startsHeld : 'no apt';
    };
    assert.deepEqual(heldOf('P starts-held kept'), { kept: true });
    assert.deepEqual(heldOf('P starts-held -'), { kept: false });
    assert.equal(heldOf(''), undefined);
  });

  it('lists never fetched, a package removed with its configuration left, and what a removal would remove', () => {
    const asks = [{ module: 'web', packages: [{ name: 'hello', state: 'absent' as const }] }];
    const answer = [
      'P apt 1764000000 never',
      'P status hello config-files 2.10-3',
      'P policy-end',
      'P sim web',
      '| Remv hello [2.10-3]',
      '| Purg greeter [1.0]',
      'P sim-end 0',
    ];
    assert.deepEqual(readAptSurvey(asks, answer), {
      manager: 'apt',
      packages: { hello: { offered: [], configurationLeft: '2.10-3' } },
      listsNeverFetched: true,
      simulations: {
        web: {
          ok: true,
          installs: [],
          removes: [
            { package: 'hello', purge: false },
            { package: 'greeter', purge: true },
          ],
        },
      },
    });
  });

  it('a node without apt names the package manager it has', () => {
    assert.deepEqual(readAptSurvey(ASKS, ['P none dnf']), { manager: 'none', found: 'dnf' });
    assert.deepEqual(readAptSurvey(ASKS, ['P none -']), { manager: 'none' });
  });

  it('an answer cut short is said, not guessed at', () => {
    assert.throws(
      () => readAptSurvey(ASKS, ANSWER.split('\n').slice(0, 12)),
      /the survey's packages could not be read: apt-cache policy was cut off/,
    );
  });

  it("an install that failed: apt's E: lines, and who held its lock", () => {
    const busy = `Waiting for cache lock: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (unattended-upgr)...
E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?
berth-apt-exit 100
`;
    assert.deepEqual(readAptInstall(busy), {
      ok: false,
      errors: [
        'E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?',
      ],
      busy: { pid: 812, command: 'unattended-upgr' },
    });
    assert.deepEqual(
      readAptInstall(
        "Reading package lists...\nE: Version '9' for 'hello' was not found\nberth-apt-exit 100\n",
      ),
      {
        ok: false,
        errors: ["E: Version '9' for 'hello' was not found"],
      },
    );
    assert.deepEqual(readAptInstall('Setting up hello (2.10-3) ...\nberth-apt-exit 0\n'), {
      ok: true,
    });
  });

  it("an install whose answer ended before apt did is not read as apt's refusal", () => {
    assert.equal(readAptInstall('Unpacking libldap-2.5-0 (2.5.13+dfsg-5) ...\n'), undefined);
    assert.equal(readAptInstall(''), undefined);
  });
});
