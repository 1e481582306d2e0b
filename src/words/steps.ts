import type {
  Attributes,
  CertificateFile,
  CheckOutcome,
  Drift,
  KeyOf,
  Step,
} from '../commands/steps/step.ts';
import type { Told, Voice } from '../commands/steps/told.ts';
import type { DiffShownOnce } from '../diff/diff-shown.ts';
import { shownDiff } from '../diff/diff-shown.ts';
import { describeAge, describeDuration } from '../utils/duration.ts';
import { refreshedWords } from './packages.ts';

/** How `said` marks a line a hook wrote, after the step's own line. */
const HOOK_LINE = '  > ';

/** A step done, in words: one line, then a hook's last lines. */
export function toldLines(told: Told, node: string): string[] {
  const lines = [doneWords(told.step, node, told.voice)];
  for (const line of told.hook?.tail ?? []) lines.push(`${HOOK_LINE}${line}`);
  return lines;
}

/** What a step did, in the words of the command that did it. */
export function doneWords(step: Step, node: string, voice: Voice): string {
  const { module } = step;
  switch (step.do) {
    case 'mkdir':
      return step.drift ? `mended ${step.path}` : `created ${step.path}`;
    case 'mint': {
      const where = `${step.path}${certificateTo(step.key?.certificate)}`;
      if (voice === 'take')
        return step.inside
          ? `secret ${step.secret}: minted by berth; the next converge places it in ${step.path}`
          : `secret ${step.secret}: minted by berth and written to ${where}`;
      return step.inside
        ? `minted ${step.secret} into the vault, for ${step.path}`
        : `minted ${step.secret}${keyWords(step.key)} into the vault and wrote it to ${where}`;
    }
    case 'restore': {
      const where = `${step.path}${certificateTo(step.certificate)}`;
      if (voice === 'take')
        return step.inside
          ? `secret ${step.secret}: kept in the vault; the next converge places it in ${step.path}`
          : `secret ${step.secret}: restored from the vault to ${where}`;
      return step.drift
        ? `rewrote ${step.secret} to ${step.path}, mending its owner and mode`
        : `restored ${step.secret} from the vault to ${where}`;
    }
    case 'keep': {
      const beside =
        step.certificate === undefined
          ? ''
          : `, with its certificate from ${step.certificate.path}`;
      return voice === 'take'
        ? `secret ${step.secret}: read into the vault from ${step.path}${beside}`
        : `read ${step.secret} into the vault from ${step.path}${beside}`;
    }
    case 'rotate':
      return `rotated ${step.secret} of ${module}: wrote the key of kid ${step.kid} to ${step.path}${certificateTo(step.certificate)}`;
    case 'renew':
      return `renewed ${step.secret} of ${module}: a new key and certificate from the state's CA, written to ${step.path} and ${step.certificate.path}`;
    case 'write':
      return `wrote ${step.path}`;
    case 'package':
      return `${step.how === 'install' ? 'installed' : `${step.how}d`} ${packageWords(step)}`;
    case 'unhold':
      return `removed berth's policy-rc.d from ${node}: services start there again${step.kept ? ", under the node's own policy-rc.d, put back" : ''}`;
    case 'refresh':
      return refreshedWords(node);
    case 'reload':
      if (step.script === undefined)
        return `no reload for ${module}: the change is live at its next start`;
      return `ran reload of ${module}`;
    case 'setup':
    case 'start':
    case 'stop':
      return `ran ${step.do} of ${module}`;
    case 'manage':
      if (step.via !== 'take') return `berth manages ${module} on ${node}`;
      return step.started
        ? `berth manages ${module} on ${node} now, and ${node} is to run it`
        : `berth manages ${module} on ${node} now, not yet started, and ${node} is to run it: converge ${node} to start it`;
    case 'release':
      return step.packages
        ? `released ${module}: berth no longer manages it on ${node}; its data, secrets, files and packages (${step.packages.join(', ')}) stay`
        : `released ${module}: berth no longer manages it on ${node}; its data, secrets and files stay`;
  }
}

/**
 * What a step will do, as a preview says it (indented under its module by the caller);
 * a file's diff in full with `--full-diff`, else its settings first and about 40 lines;
 * or, in a target's preview, that it is shown once for several nodes (`shownOnce`).
 */
export function previewWords(
  step: Step,
  node: string,
  fullDiff = false,
  shownOnce?: DiffShownOnce,
): string {
  switch (step.do) {
    case 'manage':
      return step.started
        ? 'record that berth manages it'
        : 'record that berth manages it, not yet started';
    case 'mkdir':
      return step.drift
        ? `mend ${step.path}: ${describeDrift(step.drift)}`
        : `create ${step.path}${describeNamed(step)}`;
    case 'mint':
      return step.inside
        ? `mint ${step.secret} into the vault, to be placed in ${step.path}`
        : `mint ${step.secret}${keyWords(step.key)} into the vault and write it to ${step.path}${describeTaken(step, ' (', ')')}${certificateTo(step.key?.certificate)}`;
    case 'restore':
      return step.drift
        ? `rewrite ${step.secret} from the vault to ${step.path} (${describeAttributes(step)}): ${describeDrift(step.drift)}`
        : `restore ${step.secret} from the vault to ${step.path}${describeTaken(step, ' (', ')')}${certificateTo(step.certificate)}`;
    case 'keep':
      return `read ${step.secret} into the vault from ${step.path}${step.match === undefined ? '' : ' (inside it)'}${step.certificate === undefined ? '' : `, with its certificate from ${step.certificate.path}`}`;
    case 'rotate': {
      const was = step.was === undefined ? '' : `, in place of kid ${step.was}`;
      const what = step.certificate
        ? `a new ${step.keyKind} key and its certificate from the state's CA for ${namesWords(step.certificate)}`
        : `a new ${step.keyKind} key`;
      return `rotate ${step.secret}: ${what}, kid ${step.kid}${was}; kept rotating in the vault since this preview, the act writes it to ${step.path}${describeTaken(step, ' (', ')')}${certificateTo(step.certificate)}`;
    }
    case 'renew': {
      const why =
        step.why.because === 'due'
          ? `it ends at ${step.why.until}, in the last third of its life`
          : `it is for ${step.why.was.join(', ') || 'no name'}, not ${step.certificate.names.join(', ')}`;
      return `renew ${step.secret}'s certificate: ${why}; a new key and certificate from the state's CA for ${namesWords(step.certificate)}, written to ${step.path} and ${step.certificate.path}`;
    }
    case 'setup':
      return step.pending
        ? `run setup, which did not finish before and is owed: ${step.script}`
        : `run setup: ${step.script}`;
    case 'write': {
      const why =
        step.why.because === 'missing'
          ? ': it is missing'
          : step.why.because === 'differs'
            ? `: it differs from what berth writes${readingWords(step.why.reading)}`
            : step.why.because === 'drift'
              ? `: ${describeDrift(step.why.drift)}`
              : step.why.because === 'carries-minted-secret'
                ? ': it carries a secret berth is to mint'
                : '';
      const diff = step.why.because === 'differs' ? step.why.diff : [];
      const taken = step.why.because === 'drift' ? '' : describeTaken(step, ', ', '');
      const once = diff.length > 0 ? shownOnce?.(step.path, diff) : undefined;
      return [
        `write ${step.path} (${describeAttributes(step)}${taken})${why}`,
        ...(once ? [once] : shownDiff(diff, fullDiff)).map((line) => `    ${line}`),
      ].join('\n');
    }
    case 'package':
      return [`${step.how} ${packageWords(step)}`, ...lookUpWords(step)].join('\n');
    case 'unhold':
      return `remove berth's policy-rc.d, left on ${node} by an install that was cut: while it stands no service starts or restarts there${step.kept ? " (the node's own is put back)" : ''}`;
    case 'refresh': {
      const age =
        step.age === undefined ? 'were never fetched' : `are ${describeAge(step.age * 1000)} old`;
      const whose = step.by === undefined ? "berth.json's" : `${step.by}'s`;
      return `refresh ${node}'s package lists first (apt-get update): they ${age}, and ${whose} refresh_after is ${step.limit}`;
    }
    case 'start':
      return step.check
        ? `start ${step.module}: its check ${describeCheck(step.check)}; run start: ${step.script}`
        : `run start: ${step.script}`;
    case 'reload':
      if (step.script === undefined) return 'no reload: the change is live at the next start';
      return step.pending
        ? `run reload, which failed before and is owed: ${step.script}`
        : `run reload: ${step.script}`;
    case 'stop':
      return `run stop: ${step.script}`;
    case 'release':
      return step.packages
        ? `stop managing it; its data, secrets, files and packages (${step.packages.join(', ')}) stay on ${node}`
        : `stop managing it; its data, secrets and files stay on ${node}`;
  }
}

/** ", an ec-p256 key", ", a key and a certificate from the state's CA for …": what a mint makes. */
function keyWords(key: KeyOf | undefined): string {
  if (!key) return '';
  if (!key.certificate) return ` (a new ${key.kind} key)`;
  return ` (a new key and its certificate from the state's CA for ${namesWords(key.certificate)})`;
}

/** "idp1.lan and 10.0.0.5, for 90 days". */
function namesWords(certificate: CertificateFile): string {
  const { names, days } = certificate;
  const last = names.at(-1) ?? '';
  const list = names.length <= 1 ? last : `${names.slice(0, -1).join(', ')} and ${last}`;
  return `${list}, for ${days} day${days === 1 ? '' : 's'}`;
}

/** ", and its certificate to /etc/x/tls.pem", when a step places one. */
function certificateTo(certificate: CertificateFile | undefined): string {
  return certificate === undefined ? '' : `, and its certificate to ${certificate.path}`;
}

/**
 * "package nginx 1.22.1-9+deb12u1 (with 2 it depends on: libnginx-mod-a 1.22.1-9, …)";
 * an upgrade or downgrade names the version it replaces.
 */
function packageWords(step: Step & { do: 'package' }): string {
  const from = step.from === undefined ? '' : ` from ${step.from}`;
  const beside = step.with ?? [];
  const shown = beside.map(
    (move) =>
      `${move.package} ${move.version}${move.from === undefined ? '' : ` (from ${move.from})`}`,
  );
  const of = step.withFor ? andWords(step.withFor) : 'it';
  const withWords =
    beside.length === 0
      ? ''
      : ` (with ${beside.length} ${of} depend${step.withFor ? '' : 's'} on: ${shown.join(', ')})`;
  const version =
    step.version === undefined ? ' at the version its refreshed lists offer' : ` ${step.version}`;
  const configuration =
    step.how === 'remove'
      ? ' (its configuration stays)'
      : step.how === 'purge'
        ? ' (its configuration too)'
        : '';
  return `package ${step.package}${version}${from}${withWords}${configuration}`;
}

/** "a", "a and b", "a, b and c". */
function andWords(names: readonly string[]): string {
  return names.length <= 1
    ? (names[0] ?? '')
    : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** "owner redis: made by its packages, looked up after they are installed", indented. */
function lookUpWords(step: Step & { do: 'package' }): string[] {
  const { users = [], groups = [] } = step.lookUp ?? {};
  return [...users.map((name) => `owner ${name}`), ...groups.map((name) => `group ${name}`)].map(
    (named) => `    ${named}: made by its packages, looked up after they are installed`,
  );
}

/** ", in lines that read value workers and fact fqdn", when a diff's lines read any. */
export function readingWords(reading: readonly string[] | undefined): string {
  if (!reading || reading.length === 0) return '';
  const last = reading.at(-1);
  const list = reading.length === 1 ? last : `${reading.slice(0, -1).join(', ')} and ${last}`;
  return `, in lines that read ${list}`;
}

/** The mode a file is written with; an owner that drifted is named by describeDrift. */
function describeAttributes(step: Attributes): string {
  return `mode ${step.mode}`;
}

/** A secret's file taken from another user: "owner 0:0, now 1001:1001", between `before` and `after`. */
export function describeTaken(step: Attributes, before: string, after: string): string {
  const { replaces, uid, gid } = step;
  if (!replaces) return '';
  return `${before}owner ${uid}:${gid}, now ${replaces.uid}:${replaces.gid}${after}`;
}

/** A new directory's named mode and owner, when the definition names any. */
function describeNamed(step: { mode?: string; uid?: number; gid?: number }): string {
  const parts: string[] = [];
  if (step.mode !== undefined) parts.push(`mode ${step.mode}`);
  if (step.uid !== undefined) parts.push(`owner ${step.uid}`);
  if (step.gid !== undefined) parts.push(`group ${step.gid}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** "its owner is 0, not git (1001); its mode is 0644, not 0640". */
function describeDrift(drift: readonly Drift[]): string {
  return drift.map((item) => `its ${item.what} is ${item.was}, not ${item.want}`).join('; ');
}

/** A check's outcome in words, after "check: " or "check gitea: ". */
export function describeCheck(check: CheckOutcome): string {
  if (check.timedOut !== undefined)
    return `did not answer within its timeout of ${describeDuration(check.timedOut)}, so berth stopped it and all it started${check.last ? ` (its last line: ${check.last})` : ''}`;
  return check.code === 0
    ? 'passes'
    : `fails (exit ${check.code}${check.last ? `: ${check.last}` : ''})`;
}
