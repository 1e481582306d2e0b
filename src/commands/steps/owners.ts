import type { Accounts, PathFacts } from '../../machines/machine.ts';
import { type Ownership, SECRET_PLACEHOLDER } from '../../model/catalog.ts';
import type { ModuleSurvey } from '../survey.ts';
import type { Attributes, Drift, LaterOwners, Step } from './step.ts';

/** The mode of a file berth makes new, unless its definition names one. */
const FILE_MODE = '0644';
export const SECRET_FILE_MODE = '0600';

/** A user or group a definition names that the machine does not know: the act is refused. */
export interface NoSuchAccount {
  because: 'no-such-account';
  module: string;
  kind: 'user' | 'group';
  name: string;
  path: string;
}

/**
 * The one owner lookup of every plan: resolves the owners a module's definition names
 * against the accounts its survey found, and works out what each path is written with;
 * a name the machine does not know is a blocker, unless the plan installs packages first
 * (`packagesFirst`): then it is one they make, looked up after they are installed.
 */
export class Owners {
  readonly blockers: NoSuchAccount[] = [];
  /** The names left to look up after the packages are installed. */
  readonly later = { users: new Set<string>(), groups: new Set<string>() };
  /** Who berth acts as there: root, unless the machine says. */
  private readonly actor: { uid: number; gid: number };
  /**
   * `readable`: the paths whose file's owner could already read every value berth writes
   * there (each was found in that very file): such a file keeps its owner and group.
   */
  constructor(
    private readonly module: string,
    private readonly survey: Pick<ModuleSurvey, 'facts' | 'accounts'>,
    private readonly packagesFirst = false,
    private readonly readable: ReadonlySet<string> = new Set(),
  ) {
    this.actor = survey.accounts.actor ?? { uid: 0, gid: 0 };
  }

  /** The uid and gid a definition names for `path`, as numbers (undefined: not named, or later). */
  ids(path: string, spec: Ownership): { uid?: number; gid?: number } {
    return {
      uid: this.id(path, 'user', spec.owner, this.survey.accounts.users),
      gid: this.id(path, 'group', spec.group, this.survey.accounts.groups),
    };
  }

  /** The names for `path` looked up after the packages are installed, if any. */
  private laterOf(spec: Ownership): { later?: LaterOwners } {
    const later: LaterOwners = {};
    if (typeof spec.owner === 'string' && this.later.users.has(spec.owner)) later.user = spec.owner;
    if (typeof spec.group === 'string' && this.later.groups.has(spec.group))
      later.group = spec.group;
    return later.user === undefined && later.group === undefined ? {} : { later };
  }

  private id(
    path: string,
    kind: 'user' | 'group',
    named: string | number | undefined,
    known: Accounts['users'],
  ): number | undefined {
    if (named === undefined || typeof named === 'number') return named;
    const id = known.get(named);
    if (id === undefined && this.packagesFirst) {
      this.later[kind === 'user' ? 'users' : 'groups'].add(named);
      return undefined;
    }
    const told = this.blockers.some(
      (blocker) => blocker.kind === kind && blocker.name === named && blocker.path === path,
    );
    if (id === undefined && !told)
      this.blockers.push({
        because: 'no-such-account',
        module: this.module,
        kind,
        name: named,
        path,
      });
    return id;
  }

  /** What a file is written with: named, else as it was, else a new file's defaults. */
  file(path: string, spec: Ownership, newMode: string): Attributes {
    const fact = this.survey.facts.get(path);
    const { uid, gid } = this.ids(path, spec);
    const was = fact?.kind === 'file' ? fact : undefined;
    const attributes: Attributes = {
      mode: normalMode(spec.mode ?? was?.mode ?? newMode),
      ...this.laterOf(spec),
    };
    const owner = uid ?? (attributes.later?.user === undefined ? was?.uid : undefined);
    const group = gid ?? (attributes.later?.group === undefined ? was?.gid : undefined);
    if (owner !== undefined) attributes.uid = owner;
    if (group !== undefined) attributes.gid = group;
    return attributes;
  }

  /**
   * What a file holding a secret is written with. As `file`, but 0600 when new, and a mode
   * kept from the file that was there loses its bits for other users: a secret berth writes
   * is never readable by everyone unless its definition says so (a package's empty 0644
   * placeholder was). Nothing is kept of a file another user owns, who chose all three,
   * unless they could read what berth writes there already: then it is theirs still, so
   * that the service whose configuration it is still reads it.
   */
  secretFile(path: string, spec: Ownership): Attributes {
    const theirs = this.othersFile(path, spec);
    if (theirs) {
      const { uid, gid } = this.ids(path, spec);
      const later = this.laterOf(spec);
      return {
        mode: normalMode(spec.mode ?? SECRET_FILE_MODE),
        uid: uid ?? this.actor.uid,
        gid: gid ?? this.actor.gid,
        replaces: { uid: theirs.uid, gid: theirs.gid },
        ...later,
      };
    }
    const attributes = this.file(path, spec, SECRET_FILE_MODE);
    if (spec.mode !== undefined) return attributes;
    const mode = (Number.parseInt(attributes.mode, 8) & ~0o007).toString(8);
    return { ...attributes, mode: normalMode(mode) };
  }

  /**
   * The file at `path`, when neither root, berth's user nor the owner named owns it, and
   * its owner could not read already what berth writes there.
   */
  private othersFile(path: string, spec: Ownership): (PathFacts & { kind: 'file' }) | undefined {
    const fact = this.survey.facts.get(path);
    if (fact?.kind !== 'file' || this.readable.has(path)) return undefined;
    const { uid } = this.ids(path, spec);
    const trusted = [0, this.actor.uid, uid];
    return trusted.includes(fact.uid) ? undefined : fact;
  }

  /** What a module's file is written with: as a secret's own file when it places a secret. */
  moduleFile(path: string, file: Ownership & { content: string }): Attributes {
    return placesSecret(file) ? this.secretFile(path, file) : this.file(path, file, FILE_MODE);
  }

  /** As `drift`, and all a file another user owns has that berth does not write. */
  secretDrift(path: string, spec: Ownership): Drift[] {
    const drift = this.drift(path, spec);
    const theirs = this.othersFile(path, spec);
    if (!theirs) return drift;
    const { uid, gid, mode } = this.secretFile(path, spec);
    const was = { owner: theirs.uid, group: theirs.gid, mode: theirs.mode };
    const want = { owner: uid, group: gid, mode };
    for (const what of ['owner', 'group', 'mode'] as const)
      if (was[what] !== want[what] && !drift.some((item) => item.what === what))
        drift.push({ what, was: String(was[what]), want: String(want[what]) });
    return drift;
  }

  /** As `moduleFile`: a file placing a secret drifts as a secret's own file. */
  moduleFileDrift(path: string, file: Ownership & { content: string }): Drift[] {
    return placesSecret(file) ? this.secretDrift(path, file) : this.drift(path, file);
  }

  /** How a path that is there differs from what its definition names (unnamed is kept). */
  drift(path: string, spec: Ownership): Drift[] {
    const fact = this.survey.facts.get(path);
    if (fact?.kind !== 'file' && fact?.kind !== 'directory') return [];
    const { uid, gid } = this.ids(path, spec);
    const drift: Drift[] = [];
    if (spec.mode !== undefined && normalMode(spec.mode) !== fact.mode)
      drift.push({ what: 'mode', was: fact.mode, want: normalMode(spec.mode) });
    if (uid !== undefined && uid !== fact.uid)
      drift.push({ what: 'owner', was: String(fact.uid), want: named(spec.owner, uid) });
    if (gid !== undefined && gid !== fact.gid)
      drift.push({ what: 'group', was: String(fact.gid), want: named(spec.group, gid) });
    return drift;
  }

  /** A data directory: made when missing, mended when its named owner or mode drifted. */
  directory(data: Ownership & { path: string }): Step & { do: 'mkdir' } {
    const { uid, gid } = this.ids(data.path, data);
    const step: Step & { do: 'mkdir' } = { do: 'mkdir', module: this.module, path: data.path };
    if (data.mode !== undefined) step.mode = normalMode(data.mode);
    if (uid !== undefined) step.uid = uid;
    if (gid !== undefined) step.gid = gid;
    return { ...step, ...this.laterOf(data) };
  }

  /** The fact the survey holds for a path. */
  fact(path: string): PathFacts | undefined {
    return this.survey.facts.get(path);
  }
}

/** A file placing a secret is a secret's own file. */
function placesSecret(file: { content: string }): boolean {
  return file.content.search(SECRET_PLACEHOLDER) !== -1;
}

/** An owner as the preview names it: "git (1001)", or the number alone. */
function named(name: string | number | undefined, id: number): string {
  return typeof name === 'string' ? `${name} (${id})` : String(id);
}

/** Modes as four octal digits, the way a survey reports them. */
export function normalMode(mode: string): string {
  return mode.padStart(4, '0');
}
