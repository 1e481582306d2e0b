/**
 * A kept survey's words are made when it is read: a new survey's from its typed preview
 * and refusal, the same words the preview was answered with, each file's diff whole; an
 * earlier berth's survey in the words it kept, as they were. Read back from a state
 * directory, as the view reads it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ConvergeBlocker } from '../../src/commands/converge-plan.ts';
import type { CommandResult } from '../../src/commands/results.ts';
import type { Blocker } from '../../src/model/blocker.ts';
import { fileStores } from '../../src/stores/file-store.ts';
import type { KeptSurvey, Stores } from '../../src/stores/stores.ts';
import { blockerReport } from '../../src/words/blockers.ts';
import { surveyShown } from '../../src/words/kept-survey.ts';
import { refusalWords } from '../../src/words/refusals.ts';
import { saidOf } from '../../src/words/said.ts';

const LONG_DIFF = Array.from({ length: 80 }, (_, i) => `+setting${i}=${i}`);

describe("a kept survey's words, made when read", () => {
  let dir: string;
  let stores: Stores;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-survey-words-'));
    stores = fileStores({ dir, createIfMissing: false });
  });
  after(async () => {
    await stores.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function keptAndRead(survey: KeptSurvey) {
    const opened = await stores.openNode(survey.node, 'converge');
    await opened.keepSurvey(survey);
    await opened.close();
    const [read] = await stores.readSurveys([survey.node]);
    assert.ok(read, 'kept');
    return surveyShown(read);
  }

  it("makes a new survey's words from its typed preview, each diff whole, and its blockers' words", async () => {
    const blocker: Blocker & ConvergeBlocker = {
      because: 'held-not-managed',
      module: 'redis',
      held: { kind: 'data', paths: ['/var/lib/redis'] },
    };
    const result = {
      command: 'converge',
      node: 'web1',
      preview: {
        plan: {
          modules: [
            {
              module: 'app',
              action: 'install',
              steps: [
                {
                  do: 'write',
                  module: 'app',
                  path: '/etc/app.conf',
                  mode: '0644',
                  why: { because: 'differs', diff: LONG_DIFF },
                },
              ],
            },
          ],
          blockers: [blocker],
        },
        digest: 'd'.repeat(64),
        nothingToDo: false,
      },
    } satisfies CommandResult;
    const shown = await keptAndRead({
      survey_version: 2,
      node: 'web1',
      at: '2026-11-21T09:00:00.000Z',
      actor: 'alice',
      via: 'cli',
      report: { digest: 'd'.repeat(64), steps: [], blockers: [blocker], outcome: 'previewed' },
      result,
    });
    assert.equal(shown.said, saidOf({ result }, { fullDiff: true }));
    for (const line of LONG_DIFF) assert.ok(shown.said.includes(line), `${line}, whole`);
    assert.deepEqual(shown.report.blockers, [blockerReport(blocker, 'web1')]);
    assert.match(shown.report.blockers[0]?.words ?? '', /web1 holds redis's data/);
    assert.equal(shown.refused, undefined);
  });

  it("makes a refused survey's words from its typed refusal", async () => {
    const refusal = {
      kind: 'unreachable',
      code: 'unreachable',
      node: 'web2',
      message: 'ssh: connect to host web2 port 22: Connection refused',
    } as const;
    const shown = await keptAndRead({
      survey_version: 2,
      node: 'web2',
      at: '2026-11-21T09:01:00.000Z',
      actor: 'alice',
      via: 'api',
      report: { steps: [], blockers: [], outcome: 'refused', code: 'unreachable' },
      refusal,
    });
    assert.equal(shown.refused, refusalWords(refusal));
    assert.match(shown.refused ?? '', /^web2 cannot be reached: ssh: connect/);
    assert.equal(shown.said, '');
  });

  it("shows an earlier berth's survey in the words it kept, as they were", async () => {
    const earlier: KeptSurvey = {
      node: 'web3',
      at: '2026-11-20T09:00:00.000Z',
      actor: 'bob',
      via: 'cli',
      report: {
        steps: [],
        blockers: [
          {
            code: 'held_not_managed',
            kind: 'held-not-managed',
            module: 'redis',
            words: 'web3 holds redis’s data, as an earlier berth said it',
          },
        ],
        outcome: 'previewed',
      },
      said: 'converge web3\nblocked: web3 holds redis’s data, as an earlier berth said it',
    };
    assert.deepEqual(await keptAndRead(earlier), earlier);
  });
});
