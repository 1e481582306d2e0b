import type { NodeStatus, StatusAnswer } from '../commands/status.ts';
import type { CheckOutcome } from '../commands/steps/step.ts';
import type { Managed } from '../model/state.ts';
import { describeAge } from '../utils/duration.ts';
import type { AnswerWords } from './answer-words.ts';
import { toRunWords } from './to-run-words.ts';

/** `berth status` in words: a few lines a node. */
export const statusWords: AnswerWords<StatusAnswer> = {
  async words(answer, _asked, io) {
    if ('refused' in answer) return;
    // A check's words come with the diff's, which a status without --check does not load.
    const checked = answer.nodes.some((item) => item.checks !== undefined);
    const words = checked ? await import('../words/steps.ts') : undefined;
    io.out(answer.nodes.flatMap((item) => statusLines(item, words?.describeCheck)).join('\n'));
  },
};

/** A node's status as the command line prints it. */
function statusLines(
  item: NodeStatus,
  describeCheck: ((check: CheckOutcome) => string) | undefined,
): string[] {
  const lines: string[] = [];
  const where =
    item.machine && 'root' in item.machine
      ? `root ${item.machine.root}`
      : `ssh ${item.machine?.ssh}`;
  lines.push(`${item.node} (${where})`);
  lines.push(`  to run: ${toRunWords(item.assigned, item.declared)}`);
  const managed = Object.entries(item.managed).map(
    ([module, record]) =>
      `${module} (by ${record.via}, since ${record.since}${record.started ? '' : ', not yet started'}${owedWords(record)})`,
  );
  lines.push(`  managed: ${managed.length ? managed.join(', ') : 'nothing'}`);
  const takenAt = item.account?.takenAt;
  lines.push(
    takenAt
      ? `  account: taken ${takenAt} (${describeAge(Date.now() - Date.parse(takenAt))} ago)`
      : '  account: none yet (berth adopt to take one)',
  );
  if (item.lock)
    lines.push(
      `  locked: berth process ${item.lock.pid} on ${item.lock.host} is acting (${item.lock.act}, since ${item.lock.since})`,
    );
  if (item.unneededPackages)
    lines.push(
      `  packages berth installed that nothing it runs needs: ${item.unneededPackages.join(', ')} (still installed: remove them by hand if nothing else uses them)`,
    );
  if (item.startsHeldSince)
    lines.push(
      `  berth's policy-rc.d may still be on ${item.node}, left by an install it began ${item.startsHeldSince} and did not see end: while it stands no service starts or restarts there; berth converge ${item.node} looks, and removes it`,
    );
  for (const problem of Object.values(item.unresolved)) lines.push(`  ${problem}`);
  for (const [module, outcome] of Object.entries(item.checks ?? {}))
    lines.push(
      outcome === null
        ? `  check ${module}: none in its definition`
        : `  check ${module}: ${describeCheck?.(outcome)}`,
    );
  return lines;
}

/** A hook that failed and is owed until it succeeds, as status says it beside the module. */
function owedWords(managed: Managed): string {
  return managed.pending?.includes('reload') ? ', a reload is owed: the next converge runs it' : '';
}
