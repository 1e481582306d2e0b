import { shellText } from '../shell/shell-text.ts';
import { shellWord } from '../shell/shell-word.ts';
import type { PackageAsk, PackagePin, PackageSpec } from './packages.ts';

/**
 * The sh apt is driven with (apt, the package managers' table's entry): its fixed text in
 * apt-survey.sh, apt-install.sh, apt-unhold.sh and apt-refresh.sh (the first three after
 * apt-hold.sh, berth's hold on service starts), the call's data put before or after it
 * as sh words, each quoted. POSIX sh, run as root on the far side of ssh or on this
 * machine; apt.ts reads their answers.
 */

const HOLD = shellText('packages/apt-hold.sh');
const SURVEY = `${HOLD}${shellText('packages/apt-survey.sh')}`;
const INSTALL = `${HOLD}${shellText('packages/apt-install.sh')}`;
const UNHOLD = `${HOLD}${shellText('packages/apt-unhold.sh')}`;
const REFRESH = shellText('packages/apt-refresh.sh');

/**
 * A package a module asks for, as apt-get takes it: `name`, `name=version`, or absent,
 * `name-` (removed) or `name_` (purged).
 */
function specOf(spec: PackageSpec): string {
  if (spec.state === 'absent') return `${spec.name}${spec.purge ? '_' : '-'}`;
  return spec.version === undefined ? spec.name : `${spec.name}=${spec.version}`;
}

/** A package to install or remove, as apt-get takes it. */
function pinOf(pin: PackagePin): string {
  if ('remove' in pin) return `${pin.name}${pin.remove === 'purge' ? '_' : '-'}`;
  return `${pin.name}=${pin.version}`;
}

const words = (items: readonly string[]) => items.map(shellWord).join(' ');

/**
 * The survey's part for packages (see apt-survey.sh): the names asked about and what is
 * asked of each, then a simulation a module.
 */
export function aptSurveyScript(asks: readonly PackageAsk[]): string {
  const names = [...new Set(asks.flatMap((ask) => ask.packages.map((spec) => spec.name)))].sort();
  const specs = [...new Set(asks.flatMap((ask) => ask.packages.map(specOf)))];
  const simulations = asks.map(
    (ask) => `apt_sim ${words([ask.module, ...ask.packages.map(specOf)])}\n`,
  );
  return `${SURVEY}apt_survey ${words([...names, '--', ...specs])}\n${simulations.join('')}`;
}

/** Installs (or removes) exactly `pins` (see apt-install.sh), waiting `waitSeconds` for apt's lock. */
export function aptInstallScript(
  pins: readonly PackagePin[],
  waitSeconds: number,
  holdStarts: boolean,
): string {
  return `WAIT=${waitSeconds} HOLD=${holdStarts ? 1 : "''"}
set -- ${words(pins.map(pinOf))}
${INSTALL}`;
}

/** Fetches the package lists anew (`apt-get update`), waiting `waitSeconds` for apt's lock. */
export function aptRefreshScript(waitSeconds: number): string {
  return `WAIT=${waitSeconds}\n${REFRESH}`;
}

/** Removes berth's policy-rc.d that a killed install left, the node's own put back (see apt-unhold.sh). */
export function aptUnholdScript(): string {
  return UNHOLD;
}
