/** A module's packages, planned from what a survey found: steps with exact versions, or blockers in words. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { planConverge } from '../../src/commands/converge-plan.ts';
import { packageSteps } from '../../src/commands/package-plan.ts';
import { stepReport } from '../../src/commands/steps/report.ts';
import type { ModuleSurvey } from '../../src/commands/survey.ts';
import { type ModuleDefinition, ModuleDefinitionSchema } from '../../src/model/catalog.ts';
import type { PackageFacts } from '../../src/packages/packages.ts';
import { describePreview } from '../../src/words/converge.ts';
import { packageBlockerWords } from '../../src/words/packages.ts';
import { previewWords } from '../../src/words/steps.ts';
import { previewRecapLine } from '../../src/words/target.ts';

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

  it('records that berth manages it first, then installs the packages, no service started, then writes and starts', () => {
    const planned = plan(facts({ listsAge: 3 * 86_400 + 5 }));
    assert.equal(
      describePreview('converge web1', 'web1', planned, {
        nothingToDo: false,
        digest: 'd',
      }),
      [
        'converge web1',
        'install web:',
        '  record that berth manages it, not yet started',
        `  install package nginx ${NGINX} (with 2 it depends on: libnginx-mod-stream ${NGINX}, nginx-common ${NGINX})`,
        '  write /etc/nginx/site (mode 0644)',
        '  run start: nginx',
        "web1's package lists are 3 days old; refresh them with berth converge web1 --refresh",
        'digest d',
      ].join('\n'),
    );
    assert.deepEqual(
      planned.modules[0]?.steps.map((step) => 'holdStarts' in step && step.holdStarts),
      [false, true, false, false],
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
      }),
      [
        'converge web1',
        'install web:',
        '  record that berth manages it, not yet started',
        `  install package nginx ${NGINX} (with 2 it depends on: libnginx-mod-stream ${NGINX}, nginx-common ${NGINX})`,
        '    owner www-data: made by its packages, looked up after they are installed',
        '    group www-data: made by its packages, looked up after they are installed',
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

describe('package lists that age by rule, packages absent, and the words of both', () => {
  const site = { '/etc/nginx/site': { content: 'site\n', owner: 'www-data' } };
  const web = (extra: Record<string, unknown> = {}) => ({
    ...v.parse(ModuleDefinitionSchema, { packages: ['nginx', 'curl'], start: 'nginx', ...extra }),
    files: site,
  });
  const survey = (packages: PackageFacts): ModuleSurvey => ({
    holdings: { data: [], secrets: {}, files: { '/etc/nginx/site': { found: false } } },
    facts: new Map([['/etc/nginx/site', { kind: 'missing' }]]),
    accounts: { users: new Map(), groups: new Map() },
    packages,
  });
  const plan = (
    definition: ModuleDefinition,
    packages: PackageFacts,
    more: { refreshAfter?: string; listsRefreshed?: boolean } = {},
  ) =>
    planConverge({
      node: 'web1',
      record: { assigned: ['web'], managed: {} },
      entries: new Map([['web', { name: 'web', definition }]]),
      surveys: new Map([['web', survey(packages)]]),
      vault: new Map(),
      ...more,
    }).plan;
  const words = (planned: ReturnType<typeof plan>) =>
    describePreview('converge web1', 'web1', planned, {
      nothingToDo: false,
      digest: 'd',
    });
  /** Lists never fetched: they offer nothing, and apt's simulation fails. */
  const empty: PackageFacts = {
    manager: 'apt',
    packages: { nginx: { offered: [] }, curl: { offered: [] } },
    listsNeverFetched: true,
    simulations: { web: { ok: false, errors: ['E: Unable to locate package nginx'] } },
  };

  it('lists never fetched, and a refresh_after: refreshed first, each package at what they will offer; an owner the packages make, looked up after', () => {
    const planned = plan(web({ refresh_after: '1d' }), empty);
    assert.deepEqual(planned.blockers, []);
    assert.equal(
      words(planned),
      [
        'converge web1',
        'install web:',
        '  record that berth manages it, not yet started',
        "  refresh web1's package lists first (apt-get update): they were never fetched, and web's refresh_after is 1d",
        '  install package nginx at the version its refreshed lists offer',
        '  install package curl at the version its refreshed lists offer',
        '    owner www-data: made by its packages, looked up after they are installed',
        '  write /etc/nginx/site (mode 0644)',
        '  run start: nginx',
        'digest d',
      ].join('\n'),
    );
  });

  it("berth.json's refresh_after, the least one, refreshes lists older than it, and not younger", () => {
    const old = {
      ...facts({ listsAge: 3 * 86_400 }),
      packages: { nginx: { candidate: NGINX, offered: [NGINX] }, curl: { offered: [] } },
    } as PackageFacts;
    const stepsOf = (planned: ReturnType<typeof plan>) =>
      planned.modules[0]?.steps.map((step) => step.do) ?? [];
    const refreshed = plan(web({ refresh_after: '7d' }), old, {
      refreshAfter: '2d',
    });
    assert.deepEqual(stepsOf(refreshed).slice(0, 2), ['manage', 'refresh']);
    assert.match(
      words(refreshed),
      /refresh web1's package lists first \(apt-get update\): they are 3d old, and berth\.json's refresh_after is 2d\n/,
    );
    assert.equal(refreshed.listsDaysOld, undefined);
    // Younger than the limit: planned on the lists as they are, their age said.
    const asTheyAre = plan(web(), old, { refreshAfter: '4d' });
    assert.equal(stepsOf(asTheyAre).includes('refresh'), false);
    assert.equal(asTheyAre.listsDaysOld, 3);
    assert.deepEqual(
      asTheyAre.blockers.map((blocker) => blocker.because),
      ['package-unavailable'],
    );
  });

  it("without refresh_after, lists that lack the packages block with one blocker each, and no knock-on: the owner is the packages'", () => {
    const planned = plan(web(), empty);
    assert.deepEqual(
      planned.blockers.map((blocker) => blocker.because),
      ['package-unavailable', 'package-unavailable'],
    );
    assert.doesNotMatch(words(planned), /www-data/);
  });

  it("a target's recap says a fresh install with packages is an install, as the node's preview does", () => {
    const ready = facts({
      packages: {
        nginx: { candidate: NGINX, offered: [NGINX] },
        curl: { installed: '7.88.1-10', offered: [] },
      },
    });
    const planned = plan(web(), ready);
    assert.match(words(planned), /^install web:$/m);
    const steps = planned.modules.flatMap((item) => item.steps.map(stepReport));
    assert.equal(
      previewRecapLine('web1', 'converge', { report: { digest: 'd', steps, blockers: [] } }),
      `  web1: install web (${steps.length} steps)`,
    );
  });

  it('a pinned version lists refreshed just now lack is not sent to another refresh', () => {
    const { blockers } = packageSteps(
      'cache',
      definition([{ name: 'redis-server', version: '5:7.0.16-1' }]),
      facts(),
      true,
      { refreshed: true },
    );
    assert.deepEqual(
      blockers.map((blocker) => packageBlockerWords(blocker, 'web1')),
      [
        "redis-server 5:7.0.16-1 is not in web1's package lists (they offer 5:7.0.15-1~deb12u1, 5:7.0.11-1~deb12u1); they were refreshed just now: pin a version they offer, or add a source that offers this one",
      ],
    );
  });

  it('what several packages of a module depend on is said of them all, not of the last', () => {
    const both = facts({
      packages: {
        nginx: { candidate: NGINX, offered: [NGINX] },
        curl: { candidate: '7.88.1-10', offered: ['7.88.1-10'] },
      },
      simulations: {
        web: {
          ok: true,
          installs: [
            { package: 'nginx-common', version: NGINX },
            { package: 'nginx', version: NGINX },
            { package: 'libcurl4', version: '7.88.1-10' },
            { package: 'curl', version: '7.88.1-10' },
          ],
        },
      },
    });
    const { steps } = packageSteps(
      'web',
      definition([{ name: 'nginx' }, { name: 'curl' }]),
      both,
      true,
    );
    assert.deepEqual(
      steps.map((step) => previewWords(step, 'web1')),
      [
        `install package nginx ${NGINX}`,
        `install package curl 7.88.1-10 (with 2 nginx and curl depend on: nginx-common ${NGINX}, libcurl4 7.88.1-10)`,
      ],
    );
  });

  it('a package absent is removed, its configuration kept, or purged when asked; apt removing another refuses', () => {
    const absent = (purge?: boolean) =>
      definition([{ name: 'hello', state: 'absent', ...(purge ? { purge } : {}) }]);
    const state = (
      hello: Record<string, unknown>,
      removes = [{ package: 'hello', purge: false }],
    ) =>
      facts({
        packages: { hello: { offered: [], ...hello } },
        simulations: { web: { ok: true, installs: [], removes } },
      });
    const said = (planned: ReturnType<typeof packageSteps>) => [
      ...planned.steps.map((step) => previewWords(step, 'web1')),
      ...planned.blockers.map((blocker) => packageBlockerWords(blocker, 'web1')),
    ];
    assert.deepEqual(said(packageSteps('web', absent(), state({ installed: '2.10-3' }), false)), [
      'remove package hello 2.10-3 (its configuration stays)',
    ]);
    assert.deepEqual(
      said(packageSteps('web', absent(), state({ configurationLeft: '2.10-3' }), false)),
      [],
    );
    assert.deepEqual(
      said(
        packageSteps(
          'web',
          absent(true),
          state({ configurationLeft: '2.10-3' }, [{ package: 'hello', purge: true }]),
          false,
        ),
      ),
      ['purge package hello 2.10-3 (its configuration too)'],
    );
    assert.deepEqual(said(packageSteps('web', absent(true), state({}), false)), []);
    assert.deepEqual(
      said(
        packageSteps(
          'web',
          absent(),
          state({ installed: '2.10-3' }, [
            { package: 'hello', purge: false },
            { package: 'greeter', purge: false },
          ]),
          false,
        ),
      ),
      [
        "apt on web1 would not install web's packages: it would remove greeter too, and berth removes only a package a definition names absent",
      ],
    );
  });

  it('a definition says absent with no version, purge only with absent, and refresh_after as a duration', () => {
    const problems = (extra: Record<string, unknown>) => {
      const parsed = v.safeParse(ModuleDefinitionSchema, extra);
      return parsed.success ? [] : parsed.issues.map((issue) => issue.message);
    };
    assert.deepEqual(problems({ packages: [{ name: 'hello', state: 'absent', purge: true }] }), []);
    assert.deepEqual(problems({ packages: [{ name: 'hello', state: 'absent', version: '1.0' }] }), [
      'a package absent has no version: berth removes whatever version is installed',
    ]);
    assert.deepEqual(problems({ packages: [{ name: 'hello', purge: true }] }), [
      'purge is for a package absent ("state": "absent"): its configuration is removed too',
    ]);
    assert.deepEqual(problems({ packages: [{ name: 'hello', state: 'gone' }] }), [
      'state is "present" (the default) or "absent"',
    ]);
    assert.deepEqual(problems({ packages: ['hello-'] }), [
      'a package is a Debian package name, like "nginx" (a-z, 0-9, +, . and -)',
    ]);
    assert.deepEqual(problems({ refresh_after: '1d' }), []);
    assert.deepEqual(problems({ refresh_after: 'daily' }), [
      'how old the package lists may be, a duration like "12h" or "1d"',
    ]);
  });
});
