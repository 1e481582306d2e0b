import type { TakePreview } from '../commands/results.ts';
import { foundAsWanted, type TakePlan } from '../commands/take-plan.ts';
import type { DiffShownOnce } from '../diff/diff-shown.ts';
import { shownDiff } from '../diff/diff-shown.ts';
import { describeAge, describeDuration } from '../utils/duration.ts';
import { blockerWords } from './blockers.ts';
import { packageBlockerWords } from './packages.ts';
import { describeCheck, describeTaken, readingWords } from './steps.ts';

/**
 * ", an ec-p256 key, kid …, with its certificate at …": a key secret as the take keeps it
 * (the kid of one found), or mints it.
 */
function keyWords(key: TakePlan['secrets'][number]['key'], origin: string): string {
  if (!key) return '';
  const what = key.found
    ? `an ${key.found.keyKind} key, kid ${key.found.kid}`
    : origin === 'mint'
      ? key.certificate
        ? "a new key and its certificate from the state's CA"
        : `a new ${key.kind} key`
      : `a ${key.kind === 'tls' ? 'tls key' : `${key.kind} key`}`;
  const certificate = key.certificate
    ? `, with its certificate ${origin === 'found' ? 'found' : 'written'} at ${key.certificate.path}`
    : '';
  return `: ${what}${certificate}`;
}

/** What a survey saw at a data path: found, empty (there, but not found), or not found. */
export function datumWords(datum: { found: boolean; empty?: true; link?: string }): string {
  return datum.link ?? (datum.found ? 'found' : datum.empty ? 'empty' : 'not found');
}

/**
 * A take preview in words: the account, each datum, secret, check and file (its diff whole
 * with `fullDiff`), the refusals, the digest.
 */
export function describeTakePreview(
  node: string,
  module: string,
  facts: TakePreview,
  fullDiff = false,
  shownOnce?: DiffShownOnce,
): string {
  const { plan } = facts;
  const lines = [
    `take ${module} on ${node}, from the account taken ${describeAge(facts.age)} ago (the flip allows ${describeDuration(facts.flip)})`,
  ];
  for (const datum of plan.data) lines.push(`data ${datum.path}: ${datumWords(datum)}`);
  for (const secret of plan.secrets) {
    const origin =
      secret.origin === 'found'
        ? `found on ${node} ${secret.match === undefined ? 'at' : 'inside'} ${secret.path}`
        : secret.origin === 'vault'
          ? `kept in the vault: restored to ${secret.path}`
          : `to be minted by berth, at ${secret.path}`;
    const taken = secret.attributes ? describeTaken(secret.attributes, ' (', ')') : '';
    lines.push(`secret ${secret.name}: ${origin}${taken}${keyWords(secret.key, secret.origin)}`);
  }
  if (plan.check)
    lines.push(
      plan.check.code === 0
        ? `check: passes, so ${module} is taken as running`
        : `check: ${describeCheck(plan.check)}, so ${module} is taken as not started: the next converge runs its start`,
    );
  for (const item of plan.packages ?? []) {
    const wanted = item.pinned === undefined ? '' : ` ${item.pinned}`;
    lines.push(
      foundAsWanted(item)
        ? `package ${item.name}: found at ${item.installed}`
        : item.installed === undefined
          ? `package ${item.name}: not installed on ${node}; the next converge installs it${wanted}`
          : `package ${item.name}: found at ${item.installed}, not at its pin ${item.pinned}; the next converge installs${wanted}`,
    );
  }
  if (plan.packagesBlocker)
    lines.push(`packages: ${packageBlockerWords(plan.packagesBlocker, node)}`);
  for (const file of plan.files ?? []) {
    if (file.why.because === 'missing') {
      lines.push(`file ${file.path}: missing on ${node}; the next converge writes it`);
      continue;
    }
    lines.push(
      `file ${file.path}: differs from what berth writes${readingWords(file.why.reading)}; the next converge rewrites it`,
    );
    const once = shownOnce?.(file.path, file.why.diff);
    for (const line of once ? [once] : shownDiff(file.why.diff, fullDiff))
      lines.push(`    ${line}`);
  }
  if (facts.nothingHeld)
    lines.push(`${node} holds nothing for ${module}: nothing to compare, so yes alone is enough`);
  for (const blocker of facts.blockers)
    lines.push(`the act would be refused: ${blockerWords(blocker, node)}`);
  lines.push(`digest ${facts.digest}`);
  return lines.join('\n');
}
