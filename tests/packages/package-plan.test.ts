/** A module's packages, planned from what a survey found: steps with exact versions, or blockers in words. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { type ModuleDefinition, ModuleDefinitionSchema } from '../../src/catalog.ts';
import { planConverge } from '../../src/commands/converge-plan.ts';
import { packageSteps } from '../../src/commands/package-plan.ts';
import type { PackageFacts } from '../../src/packages/packages.ts';
import type { ModuleSurvey } from '../../src/survey.ts';
import { describePreview } from '../../src/words/converge.ts';
import { packageBlockerWords } from '../../src/words/packages.ts';
import { previewWords } from '../../src/words/steps.ts';

function definition(packages: ModuleDefinition['packages']): ModuleDefinition {
  return { description: '', needs: [], packages, data: [], secrets: {}, values: {}, files: {} };
}

const NGINX = '1.22.1-9+deb12u1';
const facts = (extra: Partial<Extract<PackageFacts, { manager: 'apt' }>> = {}): PackageFacts => ({
  manager: 'apt',
  packages: {
    nginx: { candidate: NGINX, offered: [NGINX] },
    'redis-server': {
      installed: '5:7.0.15-1~deb12u1',
      candidate: '5:7.0.15-1~deb12u1',
      offered: ['5:7.0.15-1~deb12u1', '5:7.0.11-1~deb12u1'],
    },
  },
  simulations: {
    web: {
      ok: true,
      installs: [
        { package: 'libnginx-mod-stream', version: NGINX },
        { package: 'nginx-common', version: NGINX },
        { package: 'nginx', version: NGINX },
      ],
    },
  },
  ...extra,
});

describe("a module's packages, planned", () => {
  it('a package not installed is installed at the candidate, with what apt installs beside it', () => {
    const { steps, blockers } = packageSteps('web', definition([{ name: 'nginx' }]), facts(), true);
    assert.deepEqual(blockers, []);
    assert.deepEqual(
      steps.map((step) => previewWords(step, 'web1')),
      [
        `install package nginx ${NGINX} (with 2 it depends on: libnginx-mod-stream ${NGINX}, nginx-common ${NGINX})`,
      ],
    );
  });

  it('an unpinned package installed is left as it is, whatever the lists offer', () => {
    const planned = packageSteps('web', definition([{ name: 'redis-server' }]), facts(), true);
    assert.deepEqual(planned, { steps: [], blockers: [] });
  });

  it('a pinned version other than the installed one is a downgrade or upgrade, named', () => {
    const down = packageSteps(
      'web',
      definition([{ name: 'redis-server', version: '5:7.0.11-1~deb12u1' }]),
      facts({ simulations: { web: { ok: true, installs: [] } } }),
      false,
    );
    assert.deepEqual(down.steps, [
      {
        do: 'package',
        module: 'web',
        package: 'redis-server',
        version: '5:7.0.11-1~deb12u1',
        how: 'downgrade',
        from: '5:7.0.15-1~deb12u1',
        holdStarts: false,
      },
    ]);
    assert.equal(
      previewWords(down.steps[0] as never, 'web1'),
      'downgrade package redis-server 5:7.0.11-1~deb12u1 from 5:7.0.15-1~deb12u1',
    );
  });

  it('a pin the lists do not offer is a blocker saying what they do offer and what to do', () => {
    const { steps, blockers } = packageSteps(
      'cache',
      definition([{ name: 'nginx' }, { name: 'redis-server', version: '5:7.0.16-1' }]),
      facts(),
      true,
    );
    // What can be installed is still named, without what apt would add: its simulation was
    // of the whole set, which the lists cannot give.
    assert.deepEqual(
      steps.map((step) => previewWords(step, 'web1')),
      [`install package nginx ${NGINX}`],
    );
    assert.deepEqual(
      blockers.map((blocker) => packageBlockerWords(blocker, 'web1')),
      [
        "redis-server 5:7.0.16-1 is not in web1's package lists (they offer 5:7.0.15-1~deb12u1, 5:7.0.11-1~deb12u1); refresh them with berth converge web1 --refresh",
      ],
    );
  });

  it("apt's refusal of the simulation is a blocker in its own words", () => {
    const { blockers } = packageSteps(
      'web',
      definition([{ name: 'nginx' }]),
      facts({
        simulations: {
          web: { ok: false, errors: ['E: Packages need to be removed but remove is disabled.'] },
        },
      }),
      true,
    );
    assert.deepEqual(
      blockers.map((blocker) => packageBlockerWords(blocker, 'web1')),
      [
        "apt on web1 would not install web's packages: E: Packages need to be removed but remove is disabled.",
      ],
    );
  });

  it('a node without apt, and a directory of this machine, are blockers in words', () => {
    const words = (found: PackageFacts) =>
      packageSteps('web', definition([{ name: 'nginx' }]), found, true).blockers.map((blocker) =>
        packageBlockerWords(blocker, 'web1'),
      );
    assert.deepEqual(words({ manager: 'none', found: 'dnf' }), [
      "web1 has no apt (it has dnf): berth installs web's packages with apt only",
    ]);
    assert.deepEqual(words({ manager: 'none' }), [
      "web1 has no apt, nor another package manager berth knows: berth cannot install web's packages there",
    ]);
    assert.deepEqual(words({ manager: 'not-a-machine', root: '/srv/web1' }), [
      'web1 is a directory of this machine (/srv/web1), not a machine with packages of its own: berth installs no packages for web there',
    ]);
  });
});

describe('a converge of a module with packages, planned', () => {
  const web = v.parse(ModuleDefinitionSchema, {
    packages: ['nginx'],
    files: { '/etc/nginx/site': { content: 'site\n' } },
    start: 'nginx',
  });
  const definition = { ...web, files: { '/etc/nginx/site': { content: 'site\n' } } };
  const survey = (packages: PackageFacts): ModuleSurvey => ({
    holdings: { data: [], secrets: {}, files: { '/etc/nginx/site': { found: false } } },
    facts: new Map([['/etc/nginx/site', { kind: 'missing' }]]),
    accounts: { users: new Map(), groups: new Map() },
    packages,
  });
  const plan = (packages: PackageFacts, started?: boolean) =>
    planConverge({
      node: 'web1',
      record: {
        assigned: ['web'],
        managed:
          started === undefined
            ? {}
            : { web: { since: '2026-01-01T00:00:00.000Z', via: 'converge', started } },
      },
      entries: new Map([['web', { name: 'web', definition }]]),
      surveys: new Map([['web', survey(packages)]]),
      vault: new Map(),
    }).plan;

  it('installs the packages first, no service started, then records, writes and starts', () => {
    const planned = plan(facts({ listsAge: 3 * 86_400 + 5 }));
    assert.equal(
      describePreview('converge web1', 'web1', planned, {
        nothingToDo: false,
        digest: 'd',
        fullDiff: false,
      }),
      [
        'converge web1',
        'install web:',
        `  install package nginx ${NGINX} (with 2 it depends on: libnginx-mod-stream ${NGINX}, nginx-common ${NGINX})`,
        '  record that berth manages it, not yet started',
        '  write /etc/nginx/site (mode 0644)',
        '  run start: nginx',
        "web1's package lists are 3 days old; refresh them with berth converge web1 --refresh",
        'digest d',
      ].join('\n'),
    );
    assert.deepEqual(
      planned.modules[0]?.steps.map((step) => 'holdStarts' in step && step.holdStarts),
      [true, false, false, false],
    );
  });

  it('a package removed by hand from a running module is installed again, its service let start', () => {
    const planned = plan(facts(), true);
    assert.deepEqual(
      planned.modules[0]?.steps.map((step) => [step.do, 'holdStarts' in step && step.holdStarts]),
      [
        ['package', false],
        ['write', false],
        ['reload', false],
      ],
    );
    assert.equal(planned.listsDaysOld, undefined);
  });
  it("an owner the machine does not know is looked up after the module's packages are installed; with none to install, it blocks", () => {
    const owned = {
      ...definition,
      files: { '/etc/nginx/site': { content: 'site\n', owner: 'www-data', group: 'www-data' } },
    };
    const planOwned = (packages: PackageFacts) =>
      planConverge({
        node: 'web1',
        record: { assigned: ['web'], managed: {} },
        entries: new Map([['web', { name: 'web', definition: owned }]]),
        surveys: new Map([['web', survey(packages)]]),
        vault: new Map(),
      }).plan;
    const installing = planOwned(facts());
    assert.deepEqual(installing.blockers, []);
    assert.equal(
      describePreview('converge web1', 'web1', installing, {
        nothingToDo: false,
        digest: 'd',
        fullDiff: false,
      }),
      [
        'converge web1',
        'install web:',
        `  install package nginx ${NGINX} (with 2 it depends on: libnginx-mod-stream ${NGINX}, nginx-common ${NGINX})`,
        '    owner www-data: made by its packages, looked up after they are installed',
        '    group www-data: made by its packages, looked up after they are installed',
        '  record that berth manages it, not yet started',
        '  write /etc/nginx/site (mode 0644)',
        '  run start: nginx',
        'digest d',
      ].join('\n'),
    );
    const write = installing.modules[0]?.steps.find((step) => step.do === 'write');
    assert.deepEqual(write && 'later' in write && write.later, {
      user: 'www-data',
      group: 'www-data',
    });
    const nothingToInstall = facts({
      packages: { nginx: { installed: NGINX, candidate: NGINX, offered: [NGINX] } },
    });
    assert.deepEqual(
      planOwned(nothingToInstall).blockers.map((blocker) => blocker.because),
      ['no-such-account', 'no-such-account'],
    );
  });
});
