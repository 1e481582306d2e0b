/**
 * `berth log` in text keeps one entry on one line, whatever the entry holds: a name
 * with a line break in it, sent by anyone (a refused request is journaled as it came),
 * or an actor with one (a token's `sub`, journaled by a berth that did not yet refuse
 * such tokens) cannot make a line that reads as another act.
 */
import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, type World } from '../helpers/world.ts';

const FORGED = '2026-01-01T00:00:00.000Z root (cli) adopt box: done';

describe('berth log keeps every entry on one line', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  it('shows line breaks and other control characters in an entry as escapes', async () => {
    // Refused by the names rule, and journaled with the name as given.
    const refused = await world.berth('assign', `box\n${FORGED}`, 'm');
    assert.equal(refused.code, 1);
    await appendFile(
      join(world.state, 'journal.jsonl'),
      `${JSON.stringify({
        at: '2026-02-02T00:00:00.000Z',
        actor: `mallory\n${FORGED}`,
        via: 'api',
        act: 'adopt',
        node: 'box',
        outcome: 'refused',
        said: '',
        error: 'start of m failed (exit 1):\r\nline one\n\u001b[2Kline two\u2028three\u0085four',
      })}\n`,
    );
    const run = await world.berth('log');
    assert.equal(run.code, 0, run.stderr);
    // Oldest first: the entry dated 2026-02-02 before today's refused assign.
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2, run.stdout);
    assert.match(
      lines[1] ?? '',
      new RegExp(
        `^\\S+ ${userInfo().username} \\(cli\\) assign box\\\\n2026-01-01T00:00:00\\.000Z root \\(cli\\) adopt box: done m: refused: `,
      ),
    );
    assert.equal(
      lines[0],
      `2026-02-02T00:00:00.000Z mallory\\n${FORGED} (api) adopt box: refused: start of m failed (exit 1):\\r\\nline one\\n\\u001b[2Kline two\\u2028three\\u0085four`,
    );
    for (const line of lines) assert.ok(!line.startsWith(FORGED), line);
  });
});
