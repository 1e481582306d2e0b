import type { PackageAsk } from '../packages/packages.ts';
import type { AccountNames, Machine, Survey, SurveyAsks, SurveyPath } from './machine.ts';

/** A machine whose last survey may be answered once more, when armed to. */
export interface SurveyAgain {
  machine: Machine;
  /**
   * The next survey, if it asks the same paths, names, packages and facts as the last and nothing was
   * done on the machine since, is answered with the last one's answer, once.
   */
  again(): void;
}

/**
 * A target's act surveys every node under its lock to check the preview, then acts on
 * the first nodes at once; each act's own plan asks its node the same survey a moment
 * later. Over ssh that is a session, a shell and its programs on every node for an answer
 * already in hand: here it is given again, as a one-node act would have had it, a
 * survey then its act under one lock. Only when armed, only for the same question, and
 * never past anything done on the machine (a change or a hook), so what is written is
 * always planned on what the machine held after berth's last act there.
 */
export function surveyAgain(inner: Machine): SurveyAgain {
  let last: { asked: string; answer: Survey } | undefined;
  let armed = false;
  // A change begun while a survey was under way makes that survey's answer stale too.
  let done = 0;
  const forget = () => {
    last = undefined;
    armed = false;
  };
  const machine: Machine = {
    async survey(
      paths: readonly SurveyPath[],
      names?: AccountNames,
      packages?: readonly PackageAsk[],
      asks?: SurveyAsks,
    ) {
      const asked = JSON.stringify([paths, names ?? null, packages ?? null, asks ?? null]);
      const reuse = armed && last?.asked === asked ? last.answer : undefined;
      forget();
      if (reuse) return reuse;
      const before = done;
      const answer = await inner.survey(paths, names, packages, asks);
      if (done === before) last = { asked, answer };
      return answer;
    },
    apply(changes) {
      done++;
      forget();
      return inner.apply(changes);
    },
    refreshPackages(options) {
      done++;
      forget();
      return inner.refreshPackages(options);
    },
    install(pins, options) {
      done++;
      forget();
      return inner.install(pins, options);
    },
    unholdStarts() {
      done++;
      forget();
      return inner.unholdStarts();
    },
    run(script, env, options) {
      done++;
      forget();
      return inner.run(script, env, options);
    },
    close: () => inner.close(),
  };
  return {
    machine,
    again() {
      armed = last !== undefined;
    },
  };
}
