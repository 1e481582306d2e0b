/** The fleet's cells, from each node's kept survey (its converge preview, typed): each kind a preview can say. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeReport } from '../../src/model/result.ts';
import type { WordedSurvey as KeptSurvey } from '../../src/stores/stores.ts';
import { cellOf, rowsOf } from '../../src/view/matrix.ts';
import { previewLines } from '../../src/view/preview-lines.ts';

const report = (fields: Partial<NodeReport>): NodeReport => ({
  steps: [],
  blockers: [],
  outcome: 'previewed',
  ...fields,
});
const runs = (managed: Record<string, { started: boolean }> = {}, modules = ['app']) => ({
  modules,
  managed,
});

describe('a cell of the matrix', () => {
  it('is in sync with nothing to do, and not run where the node runs no such module', () => {
    assert.deepEqual(cellOf('app', report({}), runs({ app: { started: true } })), {
      kind: 'in-sync',
    });
    assert.deepEqual(cellOf('db', report({}), runs()), { kind: 'none' });
  });

  it('is to install, to update with what drifted, or to release', () => {
    const write = { kind: 'write' as const, module: 'app', path: '/etc/app.conf' };
    assert.equal(
      cellOf('app', report({ steps: [{ kind: 'manage', module: 'app' }, write] }), runs()).kind,
      'install',
    );
    assert.deepEqual(cellOf('app', report({ steps: [write] }), runs({ app: { started: true } })), {
      kind: 'update',
      steps: ['write /etc/app.conf'],
    });
    const release = [
      { kind: 'stop' as const, module: 'app' },
      { kind: 'release' as const, module: 'app' },
    ];
    assert.equal(
      cellOf('app', report({ steps: release }), runs({ app: { started: true } }, [])).kind,
      'release',
    );
  });

  it('is check failing when a started module would be started again', () => {
    const start = { kind: 'start' as const, module: 'app' };
    assert.equal(
      cellOf('app', report({ steps: [start] }), runs({ app: { started: true } })).kind,
      'check-failing',
    );
    // Not started yet: its start is an update, no failing check.
    assert.equal(
      cellOf('app', report({ steps: [start] }), runs({ app: { started: false } })).kind,
      'update',
    );
  });

  it('is blocked with its blockers’ words and codes', () => {
    const blocker = {
      code: 'held_not_managed' as const,
      kind: 'held-not-managed' as const,
      module: 'app',
      words: 'box holds app’s data',
    };
    assert.deepEqual(cellOf('app', report({ blockers: [blocker] }), runs()), {
      kind: 'blocked',
      words: ['box holds app’s data'],
      codes: ['held_not_managed'],
    });
  });

  it("is refused across a row whose node's preview was refused, with that node's words; not surveyed where none is kept", () => {
    const survey = (node: string, fields: Partial<KeptSurvey>): KeptSurvey => ({
      node,
      at: '2026-11-26T14:02:09.000Z',
      actor: 'ann',
      via: 'cli',
      report: report({}),
      said: '',
      ...fields,
    });
    const surveyed = new Map([
      [
        'web1',
        {
          survey: survey('web1', {
            report: report({ outcome: 'refused', code: 'unreachable' }),
            refused: 'web1 cannot be reached: ssh: connect refused',
          }),
          since: [],
        },
      ],
      ['web2', { survey: survey('web2', {}), since: [] }],
      ['web3', { since: [] }],
    ]);
    const rows = rowsOf(
      surveyed,
      new Map([
        ['web1', runs()],
        ['web2', runs({ app: { started: true } })],
        ['web3', runs()],
      ]),
      ['app', 'db'],
    );
    assert.deepEqual(rows[0]?.cells, {
      app: {
        kind: 'refused',
        words: 'web1 cannot be reached: ssh: connect refused',
        code: 'unreachable',
      },
      db: { kind: 'none' },
    });
    assert.deepEqual(rows[0]?.notes, ['web1 cannot be reached: ssh: connect refused']);
    assert.deepEqual(rows[1]?.cells.app, { kind: 'in-sync' });
    assert.deepEqual(rows[2]?.cells, { app: { kind: 'unsurveyed' }, db: { kind: 'none' } });
  });
});

describe("a preview's lines, as the node page colours them", () => {
  it("tells a file's diff from the words around it", () => {
    const said = [
      'converge web2',
      'update app:',
      '  write /etc/app.conf (mode 0640): it differs from what berth writes',
      '    --- /etc/app.conf on web2',
      '    +++ /etc/app.conf as berth writes it',
      '    (+1 −1 lines)',
      '    @@ -1,2 +1,2 @@',
      '     token=[secret token]',
      '    -port=8080',
      '    +port=80',
      '  install nginx 1.22',
      '    owner www: made by its packages, looked up after they are installed',
      'blocked: something',
      `digest ${'a'.repeat(64)}`,
    ].join('\n');
    assert.deepEqual(
      previewLines(said).map((line) => line.kind),
      [
        'said',
        'module',
        'said',
        'diff-head',
        'diff-head',
        'diff-note',
        'diff-hunk',
        'diff-context',
        'diff-del',
        'diff-add',
        'said',
        'said',
        'blocked',
        'digest-line',
      ],
    );
  });
});
