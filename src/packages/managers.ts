import { readAptInstall, readAptSurvey } from './apt.ts';
import {
  aptInstallScript,
  aptRefreshScript,
  aptSurveyScript,
  aptUnholdScript,
} from './apt-scripts.ts';
import type { Installed, PackageAsk, PackageFacts, PackagePin } from './packages.ts';

/**
 * A package manager as berth drives it: the sh a survey runs for packages (which answers
 * `none` when the node has not this manager) and how its lines are read, and the sh an
 * install runs as root and how its exit and output are read.
 */
export interface PackageManager {
  surveyScript(asks: readonly PackageAsk[]): string;
  readSurvey(asks: readonly PackageAsk[], lines: readonly string[]): PackageFacts;
  installScript(pins: readonly PackagePin[], waitSeconds: number, holdStarts: boolean): string;
  /**
   * Reads an install's answer, or a refresh's (the same words: done, apt's E: lines, who
   * holds its lock); undefined when the answer ended before the package manager did.
   */
  readInstall(output: string): Installed | undefined;
  refreshScript(waitSeconds: number): string;
  /** Lifts the hold on service starts a killed install left; answers as an install does. */
  unholdScript(): string;
}

/** The package managers berth knows, one entry each: apt (Debian, Ubuntu) now. */
export const PACKAGE_MANAGERS = {
  apt: {
    surveyScript: aptSurveyScript,
    readSurvey: readAptSurvey,
    installScript: aptInstallScript,
    readInstall: readAptInstall,
    refreshScript: aptRefreshScript,
    unholdScript: aptUnholdScript,
  },
} satisfies Record<string, PackageManager>;

/** The manager a machine drives: the table's one entry, until it has another. */
export const packageManager: PackageManager = PACKAGE_MANAGERS.apt;
