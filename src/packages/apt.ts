import type {
  Installed,
  PackageAsk,
  PackageFacts,
  PackageMove,
  PackagePin,
  PackageState,
  Simulation,
} from './packages.ts';

/**
 * apt, the package managers' table's one entry (Debian, Ubuntu): the sh that surveys a
 * node's packages and the sh that installs them, and how their answers are read. Both are
 * POSIX sh run as root, on the far side of ssh or on this machine; names and versions are
 * checked by the catalog's schema, so neither is ever quoted into a shell's reading.
 */

/** Where apt keeps its lists: their directory's mtime is when they were last fetched. */
const LISTS = '/var/lib/apt/lists';

/**
 * The flags a simulation and an install share, so that what a preview names is what the
 * act installs: a downgrade a pin asks for is allowed, a removal never is.
 */
const SHARED = '-q --allow-downgrades --no-remove';

/** A line the survey's apt part writes; the lines of apt's own output follow `| `. */
const MARK = 'P';

/**
 * apt before 2.9 says what an install would do in lines berth reads (`-V`: `   name
 * (version)`, `   name (old => new)`), without simulating dpkg's every step as `-s` does
 * (a third of the time); a later apt words its lists anew, and is simulated.
 */
const LISTED = '[01].*|2.[0-8]|2.[0-8].*';

/**
 * The survey's part for packages, its every line `P ...` or `| <apt's line>`: `P apt <now>
 * <lists mtime|->` (`P apt - -` when every package is installed as asked), a `P status
 * <name> <status> <version>` a package, apt-cache policy's lines (only when a package is
 * not installed as asked) then `P policy-end`, then for each module `P sim <module>`, what
 * apt says it would do to install what the module lacks (its lists, or an `apt-get -s`)
 * and `P sim-end <exit>`. With no apt, `P none <the package manager found, or ->`. One
 * dpkg-query answers for every package: each program the far side starts costs it a few
 * milliseconds, apt's each a few tens.
 */
export function aptSurveyScript(asks: readonly PackageAsk[]): string {
  const names = [...new Set(asks.flatMap((ask) => ask.packages.map((spec) => spec.name)))].sort();
  const specsOf = (ask: PackageAsk) =>
    ask.packages.map((spec) =>
      spec.version === undefined ? spec.name : `${spec.name}=${spec.version}`,
    );
  const specs = [...new Set(asks.flatMap(specsOf))];
  const simulations = asks.map((ask) => `S ${ask.module} ${specsOf(ask).join(' ')}`);
  return `# The packages: apt's database and lists, read; what an install would do, which changes nothing.
if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then
  q=$(dpkg-query -W -f='\${Package} \${db:Status-Status} \${Version}\\n' apt ${names.join(' ')} 2>/dev/null)
  # St <name>: its status and version in $q, as s.
  St() {
    s='unknown -'; set -f; IFS='
'
    for e in $q; do case $e in "$1 "*) s=\${e#"$1 "}; break ;; esac; done
    unset IFS; set +f
  }
  # L <name[=version]>...: those not installed as named, as a.
  L() {
    a=
    for w in "$@"; do
      St "\${w%%=*}"
      case $w in
        *=*) [ "$s" = "installed \${w#*=}" ] || a="$a $w" ;;
        *) case $s in "installed "*) ;; *) a="$a $w" ;; esac ;;
      esac
    done
  }
  # The lists (their age, what they offer) matter only to what is to be installed: of a
  # package installed as named, only its version.
  L ${specs.join(' ')}
  if [ -n "$a" ]; then
    printf '${MARK} apt %s %s\\n' "$(date +%s)" "$(stat -c %Y ${LISTS} 2>/dev/null || echo -)"
  else
    printf '${MARK} apt - -\\n'
  fi
  for n in ${names.join(' ')}; do St "$n"; printf '${MARK} status %s %s\\n' "$n" "$s"; done
  if [ -n "$a" ]; then apt-cache policy ${names.join(' ')} 2>/dev/null | sed 's/^/| /'; fi
  printf '${MARK} policy-end\\n'
  St apt; case \${s#installed } in ${LISTED}) v=1 ;; *) v= ;; esac
  # S <module> <name[=version]>...: what apt would do to install what the module lacks.
  S() {
    m=$1; shift; L "$@"
    printf '${MARK} sim %s\\n' "$m"
    c=0
    if [ -n "$a" ]; then
      # --print-uris stops before anything is fetched or installed; --assume-no, were it asked.
      if [ -n "$v" ]; then
        o=$(apt-get -V --print-uris --assume-no -o Debug::NoLocking=1 ${SHARED} install $a 2>&1) || c=$?
      else
        o=$(apt-get -s -o Debug::NoLocking=1 ${SHARED} install $a 2>&1) || c=$?
      fi
      printf '%s\\n' "$o" | sed 's/^/| /'
    fi
    printf '${MARK} sim-end %s\\n' "$c"
  }
  ${simulations.join('\n  ')}
else
  f=-
  for m in dnf yum zypper apk pacman; do command -v $m >/dev/null 2>&1 && { f=$m; break; }; done
  printf '${MARK} none %s\\n' "$f"
fi
`;
}

/** Reads the survey's packages part (its lines, in order); throws words when it is broken. */
export function readAptSurvey(asks: readonly PackageAsk[], lines: readonly string[]): PackageFacts {
  const broken = (why: string) => new Error(`the survey's packages could not be read: ${why}`);
  let at = 0;
  const head = lines[at++]?.split(' ') ?? [];
  if (head[0] !== MARK) throw broken('no answer');
  if (head[1] === 'none')
    return head[2] && head[2] !== '-' ? { manager: 'none', found: head[2] } : { manager: 'none' };
  if (head[1] !== 'apt') throw broken(`it says ${head[1]}`);
  const now = Number(head[2]);
  const mtime = Number(head[3]);
  const packages: Record<string, PackageState> = {};
  const installed = new Map<string, string>();
  while (lines[at]?.startsWith(`${MARK} status `)) {
    const [, , name, status, version] = (lines[at++] as string).split(' ');
    if (status === 'installed' && version) installed.set(name as string, version);
  }
  const policy: string[] = [];
  while (at < lines.length && lines[at] !== `${MARK} policy-end`) policy.push(unpiped(lines[at++]));
  if (lines[at++] !== `${MARK} policy-end`) throw broken('apt-cache policy was cut off');
  const offered = readPolicy(policy);
  for (const ask of asks)
    for (const { name } of ask.packages) {
      const known = offered.get(name);
      packages[name] = {
        ...(installed.has(name) ? { installed: installed.get(name) } : {}),
        ...(known?.candidate ? { candidate: known.candidate } : {}),
        offered: known?.offered ?? [],
      };
    }
  const simulations: Record<string, Simulation> = {};
  for (const ask of asks) {
    if (lines[at++] !== `${MARK} sim ${ask.module}`)
      throw broken(`no simulation for ${ask.module}`);
    const said: string[] = [];
    while (at < lines.length && !lines[at]?.startsWith(`${MARK} sim-end `))
      said.push(unpiped(lines[at++]));
    const code = Number((lines[at++] ?? '').split(' ')[2]);
    if (Number.isNaN(code)) throw broken(`the simulation for ${ask.module} was cut off`);
    simulations[ask.module] = code === 0 ? { ok: true, installs: readInst(said) } : refusal(said);
  }
  return {
    manager: 'apt',
    packages,
    ...(Number.isFinite(now) && Number.isFinite(mtime)
      ? { listsAge: Math.max(0, now - mtime) }
      : {}),
    simulations,
  };
}

function unpiped(line: string | undefined): string {
  return line?.startsWith('| ') ? line.slice(2) : (line ?? '');
}

/**
 * apt-cache policy's answer, by package: its candidate, and the versions its lists offer
 * (a version known only from the package database, `/var/lib/dpkg/status`, is not offered).
 */
function readPolicy(
  lines: readonly string[],
): Map<string, { candidate?: string; offered: string[] }> {
  const found = new Map<string, { candidate?: string; offered: string[] }>();
  let current: { candidate?: string; offered: string[] } | undefined;
  let version: string | undefined;
  for (const line of lines) {
    const header = /^(\S+):$/.exec(line);
    if (header) {
      current = { offered: [] };
      found.set(header[1] as string, current);
      version = undefined;
      continue;
    }
    if (!current) continue;
    const candidate = /^ {2}Candidate: (\S+)$/.exec(line);
    if (candidate) {
      if (candidate[1] !== '(none)') current.candidate = candidate[1];
      continue;
    }
    // A version's row; the installed one's is marked ` *** `.
    const row = /^ (?:\*\*\*| {3}) (\S+) -?\d+$/.exec(line);
    if (row) {
      version = row[1];
      continue;
    }
    const source = /^ {8}-?\d+ (.+)$/.exec(line);
    if (source && version !== undefined && source[1] !== '/var/lib/dpkg/status') {
      if (!current.offered.includes(version)) current.offered.push(version);
    }
  }
  return found;
}

/** The lists of what an install would do whose packages it installs (apt before 2.9, `-V`). */
const INSTALLING = new Set([
  'The following NEW packages will be installed:',
  'The following packages will be upgraded:',
  'The following packages will be DOWNGRADED:',
]);

/**
 * The packages an install would install (or upgrade, or downgrade): from a simulation,
 * `Inst name [was] (version …)`; else from apt's lists, `   name (version)` or `   name
 * (was => version)` under the headings of those it installs.
 */
function readInst(lines: readonly string[]): PackageMove[] {
  const moves: PackageMove[] = [];
  for (const line of lines) {
    const inst = /^Inst (\S+) (?:\[(\S+)\] )?\((\S+) /.exec(line);
    if (!inst) continue;
    const move: PackageMove = { package: inst[1] as string, version: inst[3] as string };
    if (inst[2] !== undefined) move.from = inst[2];
    moves.push(move);
  }
  if (moves.length > 0) return moves;
  let listing = false;
  for (const line of lines) {
    if (!line.startsWith(' ')) {
      listing = INSTALLING.has(line);
      continue;
    }
    const listed = listing ? /^ +(\S+) \((?:(\S+) => )?(\S+)\)$/.exec(line) : null;
    if (!listed) continue;
    const move: PackageMove = { package: listed[1] as string, version: listed[3] as string };
    if (listed[2] !== undefined) move.from = listed[2];
    moves.push(move);
  }
  return moves;
}

/** apt's refusal: its `E:` lines, or its last line when it wrote none. */
function refusal(lines: readonly string[]): { ok: false; errors: string[] } {
  const errors = lines.filter((line) => line.startsWith('E: '));
  const last = lines.filter((line) => line.trim() !== '').at(-1);
  return { ok: false, errors: errors.length > 0 ? errors : last ? [last] : ['apt-get failed'] };
}

/** A line of the policy file berth puts in place while it installs: it is how berth knows its own. */
const POLICY_MARK = '# berth: no service starts while berth installs packages';

/**
 * Installs exactly `pins`, non-interactively, as root. A package's own configuration file
 * never replaces one that is there (berth's, written before or after: --force-confold).
 * With `holdStarts`, no service starts meanwhile: /usr/sbin/policy-rc.d denies every start
 * (exit 101) for the install's length; one the node had is moved aside and put back after,
 * as is one a killed install left aside. apt waits `waitSeconds` for its lock, then says
 * who holds it.
 */
export function aptInstallScript(
  pins: readonly PackagePin[],
  waitSeconds: number,
  holdStarts: boolean,
): string {
  const args = pins.map((pin) => `${pin.name}=${pin.version}`).join(' ');
  const install = `apt-get install -y ${SHARED} -o DPkg::Lock::Timeout=${waitSeconds} -o Dpkg::Options::=--force-confold ${args} 2>&1`;
  const head = 'LC_ALL=C DEBIAN_FRONTEND=noninteractive; export LC_ALL DEBIAN_FRONTEND\n';
  if (!holdStarts) return `${head}${install}\n`;
  return `${head}D=/usr/sbin/policy-rc.d K=/usr/sbin/policy-rc.d.berth-kept
M='${POLICY_MARK}'
ours() { [ -f "$D" ] && grep -qxF "$M" "$D"; }
back() {
  if ours; then rm -f "$D"; fi
  if [ -e "$K" ] && [ ! -e "$D" ]; then mv "$K" "$D"; fi
}
back
if [ -e "$D" ]; then
  if [ -e "$K" ]; then echo "E: $K is in the way of the node's own $D"; exit 100; fi
  mv "$D" "$K" || exit 100
fi
trap back EXIT
trap 'exit 130' HUP INT TERM
(set -C; printf '#!/bin/sh\\n%s\\nexit 101\\n' "$M" > "$D") && chmod 755 "$D" || exit 100
${install}
c=$?
back
trap - EXIT
exit $c
`;
}

/** Fetches the package lists anew (`apt-get update`), waiting `waitSeconds` for apt's lock. */
export function aptRefreshScript(waitSeconds: number): string {
  return `LC_ALL=C DEBIAN_FRONTEND=noninteractive; export LC_ALL DEBIAN_FRONTEND
apt-get update -q -o DPkg::Lock::Timeout=${waitSeconds} 2>&1
`;
}

/** What an install said: done, or its `E:` lines, and who held apt's lock when that was why. */
export function readAptInstall(code: number, output: string): Installed {
  if (code === 0) return { ok: true };
  const { errors } = refusal(output.split('\n'));
  const held = /It is held by process (\d+) \(([^)]*)\)/.exec(output);
  return held
    ? { ok: false, errors, busy: { pid: Number(held[1]), command: held[2] as string } }
    : { ok: false, errors };
}
