import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { packageManager } from '../packages/managers.ts';
import type { PackageAsk } from '../packages/packages.ts';
import {
  type AccountNames,
  type Change,
  MachineError,
  type PathFacts,
  READ_LIMIT,
  STOP_GRACE_MS,
  type Survey,
  type SurveyPath,
} from './machine.ts';

// What the ssh machine ships to the far side, one POSIX sh script a call (in ssh's command,
// or on its standard input when it holds secrets: see ssh-machine.ts), and how it reads
// their answers. Each script's answer starts with REACHED, so that a script that never ran
// (ssh, sudo or sh said no) is told from one that failed.

/** What the hook's wrapper says, before it starts anything, where there is no setsid. */
export const NO_SETSID = 'berth: no setsid';

/** The first line of every script's answer: the far side was reached and runs berth's sh. */
export const REACHED = 'berth 1';

/** A string as one word of sh: single quotes, each inner quote as '\''. */
function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

const utf8 = new TextEncoder();

/**
 * `script` as a printf format between single quotes, which every login shell (sh, bash,
 * zsh, fish, tcsh) passes on as it is: printable ASCII stays, a newline is `\n`, a `%` is
 * `%%`, and every other byte (a quote, a backslash, `!`, UTF-8) an octal escape.
 */
export function printfFormat(script: string): string {
  return script.replace(/[^ -~]|['\\!%]/gu, (char) => {
    if (char === '\n') return '\\n';
    if (char === '%') return '%%';
    let escaped = '';
    for (const byte of utf8.encode(char)) escaped += `\\${byte.toString(8).padStart(3, '0')}`;
    return escaped;
  });
}

/** Refuses a path that is not absolute and normalised: it goes into a script as it is. */
function checkPath(path: string) {
  const refused = pathRefusal(path);
  if (refused) throw refused;
}

/** The longest path Linux looks up, less its terminating byte. */
const PATH_MAX = 4095;

function pathRefusal(path: string): MachineError | undefined {
  if (!path.startsWith('/') || posix.normalize(path) !== path || path.includes('\0'))
    return new MachineError('failed', `${path} is not an absolute, normalised machine path`);
  return undefined;
}

/**
 * The walk both scripts share (`w`): a path's names taken one at a time, as systemd's
 * `chase()` takes them, with the shell's working directory for the directory handle, so
 * that berth never reads, writes, chowns or chmods through a link, or a directory swapped
 * in, that a user other than root could have placed (PRODUCT.md, "Safety on the node").
 */
const WALK = `# The walk, as systemd's chase() walks a path, the shell's working directory its directory
# handle. A record is what stat says of a name, not following it: \`<raw mode in hex> <uid>
# <dev> <inode> <links> <size> <gid>\`.
V='%f %u %d %i %h %s %g'
# T <directory's record> <entry's record>: whether only root could have put the entry under
# its name: the directory is root's and no other user may write it, or it is sticky and
# the entry is root's.
T() {
  set -- $1 $2
  [ "$2" = 0 ] && { [ $((0x$1 & 18)) = 0 ] || { [ $((0x$1 & 512)) != 0 ] && [ "$9" = 0 ]; }; }
}
# Z <record>: z, its type: d directory, l symbolic link, f regular file, o anything else.
Z() {
  case $((0x\${1%% *} & 61440)) in 16384) z=d ;; 40960) z=l ;; 32768) z=f ;; *) z=o ;; esac
}
# I <record> <record>: whether both are of one file (the same device and inode).
I() {
  set -- $1 $2
  [ "$3 $4" = "\${10} \${11}" ]
}
# w <path> <make>: makes the path the working directory, a name at a time: each name
# lstat-ed, a symbolic link followed only when only root could have placed it, a directory
# entered with cd -P and \`.\` checked to be the one lstat-ed (else a swap raced the walk).
# Once inside, a rename above changes nothing. The names only root could have placed are
# passed at once (one lstat of every prefix). With make 1, a missing directory is made.
# 0: in the path's directory, D its record. 1: not, W says why: \`leaf\` (the last name is
# not a directory: in its directory, D that one's record, E its own, c its name),
# \`missing\`, \`notdir\`, \`link <uid> <where>\`, \`raced <where>\`, \`unreadable <reason>\`.
C=
w() {
  if [ "$C" = "$1" ]; then return 0; fi
  C= W= wo=$1 wm=$2 wh=0
  cd / || { W='unreadable / cannot be entered'; return 1; }
  set -- /; wp=; wq=\${wo#/}
  while [ -n "$wq" ]; do
    c=\${wq%%/*}; wq=\${wq#"$c"}; wq=\${wq#/}; wp=$wp/$c
    [ -e "$wp" ] || [ -L "$wp" ] || break
    set -- "$@" "$wp"
  done
  wn=$# wj=0
  if ws=$(stat -c "$V" -- "$@" 2>/dev/null); then
    set -f; IFS=$NL
    for wl in $ws; do eval "wr$wj=\\$wl"; wj=$((wj + 1)); done
    unset IFS; set +f
  fi
  if [ $wj = $wn ]; then
    D=$wr0 wk=1
    while [ $wk -lt $wn ]; do
      eval "E=\\$wr$wk"; Z "$E"
      [ $z = d ] && T "$D" "$E" || break
      D=$E wk=$((wk + 1))
    done
    eval "L=\\\${$wk}"
    wf=; if [ $wk -lt $wn ]; then eval "wf=\\$wr$wk"; fi
    cd -P -- "$L" 2>/dev/null || { W='unreadable permission denied'; return 1; }
    L=\${L%/}
  else
    D=$(stat -c "$V" /) || { W='unreadable / cannot be looked at'; return 1; }
    L= wf=
  fi
  wq=\${wo#"$L"}
  while [ -n "$wq" ]; do
    wq=\${wq#/}; c=\${wq%%/*}; wq=\${wq#"$c"}
    case $c in ''|.) continue ;; esac
    if [ "$c" = .. ]; then
      cd -P .. && D=$(stat -c "$V" .) || { W="unreadable $L/.. cannot be entered"; return 1; }
      L=\${L%/*}; continue
    fi
    # The first name past those taken at once was lstat-ed with them: a swap since shows at
    # the check of \`.\`.
    if [ -n "$wf" ]; then E=$wf wf=
    elif ! E=$(stat -c "$V" -- "./$c" 2>&1); then
      case $E in
        *'No such file or directory'*)
          if [ "$wm" != 1 ]; then W=missing; return 1; fi
          we=$(mkdir -- "./$c" 2>&1) || [ -e "./$c" ] || [ -L "./$c" ] || {
            W="unreadable cannot create directory $L/$c: \${we##*: }"; return 1; }
          E=$(stat -c "$V" -- "./$c") || { W="raced $L/$c"; return 1; } ;;
        *'Permission denied'*) W='unreadable permission denied'; return 1 ;;
        *) W="unreadable $(printf '%s' "\${E##*: }" | tr '\\n' ' ')"; return 1 ;;
      esac
    fi
    Z "$E"
    case $z in
      d)
        cd -P -- "./$c" 2>/dev/null || { W='unreadable permission denied'; return 1; }
        D=$(stat -c "$V" .) && I "$D" "$E" || { W="raced $L/$c"; return 1; }
        L=$L/$c ;;
      l)
        set -- $E
        [ "$2" = 0 ] && T "$D" "$E" || { W="link $2 $L/$c"; return 1; }
        wh=$((wh + 1))
        [ $wh -le 40 ] || { W='unreadable Too many levels of symbolic links'; return 1; }
        wt=$(readlink -- "./$c") || { W="raced $L/$c"; return 1; }
        case $wt in
          /*) cd / && D=$(stat -c "$V" /) || { W='unreadable / cannot be entered'; return 1; }
              L= wq=$wt$wq ;;
          *) wq=/$wt$wq ;;
        esac ;;
      *)
        if [ -n "$wq" ]; then W=notdir; else W=leaf; fi
        return 1 ;;
    esac
  done
  C=$wo
}
# N <uid>: the user's name, UNKNOWN when it has none: by the uid lstat-ed, as the link
# itself may be gone by now.
N() {
  set -- "$(getent passwd "$1" 2>/dev/null)"
  if [ -n "$1" ]; then printf '%s' "\${1%%:*}"; else printf UNKNOWN; fi
}
# B <text>: the text in base64 on one line, for a name that may hold any byte.
B() { printf '%s' "$1" | base64 | tr -d '\\n'; }
`;

/** The survey's functions: a path's line from its records (Q), or walked to (Y). */
const SURVEY = `# h <index> <what> <record> [empty]: a path's line, as parseSurvey reads it.
h() {
  set -- "$1" "$2" $3 "$4"
  printf '%s %s %s %s %s %s%s\\n' "$1" "$2" "$3" "$8" "$4" "$9" "\${10:+ \${10}}"
}
# j <index> <uid> <hard 0|1> <where>: a link berth does not follow, its owner named.
j() {
  printf '%s link %s %s %s %s\\n' "$1" "$2" "$3" \\
    "$(N "$2")" "$(B "$4")"
}
# Q <index> <read> <path> <record>: a path all of whose names only root could have placed.
Q() {
  Z "$4"
  case $z in
    d)
      if [ -r "$3" ] && [ -x "$3" ]; then
        e=1
        for x in "$3"/* "$3"/.[!.]* "$3"/..?*; do
          if [ -e "$x" ] || [ -L "$x" ]; then e=0; break; fi
        done
        h "$1" dir "$4" $e
      else
        printf '%s unreadable permission denied\\n' "$1"
      fi ;;
    f)
      set -- "$1" "$2" "$3" "$4" $4
      if [ "$2" = 1 ] && [ "\${10}" -le ${READ_LIMIT} ]; then
        h "$1" read "$4"
        if base64 -- "$3" 2>/dev/null; then printf '.\\n'; else printf '\\n!\\n'; fi
      else
        h "$1" file "$4"
      fi ;;
    *) printf '%s other\\n' "$1" ;;
  esac
}
# Y <index> <read> <path>: a path walked to (in a subshell), what it is there: a file read
# only from a descriptor whose file is the one lstat-ed, a regular file that is not a link.
Y() {
  if w "$3" 0; then
    e=1
    if [ -r . ] && [ -x . ]; then
      for x in ./* ./.[!.]* ./..?*; do
        if [ -e "$x" ] || [ -L "$x" ]; then e=0; break; fi
      done
      h "$1" dir "$D" $e
    else
      printf '%s unreadable permission denied\\n' "$1"
    fi
    return 0
  fi
  case $W in
    leaf) ;;
    missing|notdir) printf '%s missing\\n' "$1"; return 0 ;;
    link*) set -- "$1" $W; j "$1" "$3" 0 "\${W#link * }"; return 0 ;;
    raced*) printf '%s unreadable it changed while berth looked at it\\n' "$1"; return 0 ;;
    *) printf '%s unreadable %s\\n' "$1" "\${W#unreadable }"; return 0 ;;
  esac
  P "$1" "$2" "./$c" "$L/$c"
}
# P <index> <read> <name> <where>: what is not a directory, from its record E, in the
# directory of record D: a file with more names than one in a directory another user may
# write is a hard link; bytes are read only from a descriptor whose file is the one
# lstat-ed, still a regular file with one name.
P() {
  Z "$E"
  [ $z = f ] || { printf '%s other\\n' "$1"; return 0; }
  set -- "$1" "$2" "$3" "$4" $E
  if [ "$9" != 1 ] && ! T "$D" "$E"; then j "$1" "$6" 1 "$4"; return 0; fi
  if [ "$2" != 1 ] || [ "\${10}" -gt ${READ_LIMIT} ]; then h "$1" file "$E"; return 0; fi
  command exec 3<"$3" 2>/dev/null || { printf '%s unreadable permission denied\\n' "$1"; return 0; }
  F=$(stat -L -c "$V" /proc/self/fd/3) && Z "$F" && [ $z = f ] && I "$E" "$F" || {
    exec 3<&-; printf '%s unreadable it changed while berth looked at it\\n' "$1"; return 0; }
  set -- "$1" "$2" "$3" "$4" $F
  if [ "$9" != 1 ] && ! T "$D" "$F"; then exec 3<&-; j "$1" "$6" 1 "$4"; return 0; fi
  h "$1" read "$F"
  if base64 <&3 2>/dev/null; then printf '.\\n'; else printf '\\n!\\n'; fi
  exec 3<&-
}
# u <index> <path>: a path asked or a directory above one: those there are lstat-ed at once.
X=
u() {
  eval "U$1=\\$2"
  if [ -e "$2" ] || [ -L "$2" ]; then X="$X $1"; fi
}
`;

/** The survey's one lstat of every name asked about, and how a path is sorted by them. */
const SURVEY_PATHS = `set --
for i in $X; do eval "set -- \\"\\$@\\" \\"\\$U$i\\""; done
# A=1: every name was lstat-ed, one line each, so the paths may be sorted by them.
A=0
if [ $# -gt 0 ] && S=$(stat -c "$V" -- "$@" 2>/dev/null); then
  n=$#
  set -f; IFS=$NL; set -- $S; unset IFS; set +f
  if [ $# = $n ]; then
    A=1
    for i in $X; do eval "R$i=\\$1"; shift; done
  fi
fi
# k <index> <read> <prefix index>...: a path, by the records of its names: one whose names
# only root could have placed is answered from them; a name not there is missing when the
# directory it is looked up in may be searched; the rest are walked to (Y), in a subshell.
k() {
  i=$1 r=$2; shift 2
  eval "p=\\\${$#}"; eval "p=\\$U$p"
  if [ \${#p} -gt ${PATH_MAX} ]; then printf '%s unreadable File name too long\\n' "$i"; return 0; fi
  if [ $A = 1 ]; then
    eval "D=\\$R$1"; a=$1; shift
    while [ $# -gt 0 ]; do
      eval "E=\\\${R$1-}"
      if [ -z "$E" ]; then
        eval "d=\\$U$a c=\\$U$1"; c=\${c##*/}
        if [ -x "$d" ] && [ \${#c} -le 255 ]; then printf '%s missing\\n' "$i"; return 0; fi
        break
      fi
      Z "$E"
      if [ $# = 1 ]; then
        if T "$D" "$E"; then
          if [ $z != l ]; then Q "$i" "$r" "$p" "$E"; return 0; fi
        elif [ $z = l ]; then
          set -- $E; j "$i" "$2" 0 "$p"; return 0
        elif [ $z != d ]; then
          P "$i" "$r" "$p" "$p"; return 0
        fi
        break
      fi
      if [ $z = f ] || [ $z = o ]; then printf '%s missing\\n' "$i"; return 0; fi
      [ $z = d ] && T "$D" "$E" || break
      D=$E a=$1; shift
    done
  fi
  (Y "$i" "$r" "$p")
}
`;

/**
 * The survey script: one record a path, in order, each line `<index> <what> ...`:
 * `missing`, `other`, `unreadable <reason>`, `dir <rawmode hex> <size> <uid> <gid> <empty 0|1>`,
 * `file <rawmode hex> <size> <uid> <gid>`, `link <uid> <hard 0|1> <owner> <where, base64>`,
 * or `read ...` as `file` followed by the bytes in base64 and a line `.` (or `!` when they
 * could not be read). Then, for each name asked, `user <name> <uid>` or `group <name> <gid>`
 * (`-` for a name the machine does not know, as `getent` answers it). Then `berth end`.
 *
 * Each program it runs costs the far side a process (about a millisecond), so one `stat`
 * lstats every path and every directory above one at once, and a path whose every name only
 * root could have placed (each directory on the way root's, no other user may write it) is
 * answered from those records, read by its name. A name not there is missing when the
 * directory it is looked up in may be searched. Any other path (through a directory another
 * user may write, a link, a name stat must explain) is walked to, in a subshell: a link
 * another user could have placed is reported as a link, never followed; a file's bytes are
 * read only from a descriptor whose file is the one lstat-ed. One `getent` a database
 * resolves the names, unless it does not know them all.
 */
export function surveyScript(
  paths: readonly SurveyPath[],
  names?: AccountNames,
  packages?: readonly PackageAsk[],
): string {
  const prefixes = new Map<string, number>();
  const indexOf = (path: string) => {
    let index = prefixes.get(path);
    if (index === undefined) {
      index = prefixes.size;
      prefixes.set(path, index);
    }
    return index;
  };
  const asks = paths.map((asked, index) => {
    checkPath(asked.path);
    // The directories above it, then itself; a path too long for Linux is only itself.
    const chain = [indexOf('/')];
    if (asked.path.length > PATH_MAX) chain.push(indexOf(asked.path));
    else {
      let prefix = '';
      for (const name of asked.path.split('/').slice(1)) {
        if (name === '') continue;
        prefix += `/${name}`;
        chain.push(indexOf(prefix));
      }
    }
    return `k ${index} ${asked.read ? 1 : 0} ${chain.join(' ')}`;
  });
  const lookups = [...prefixes].map(([path, index]) => `u ${index} ${quote(path)}`);
  return `LC_ALL=C; export LC_ALL
printf '${REACHED}\\n'
NL='
'
${WALK}${SURVEY}${lookups.join('\n')}
${SURVEY_PATHS}${asks.join('\n')}
# a <database> <name> <kind>: one name's id, when getent did not answer for them all.
a() {
  if command -v getent >/dev/null 2>&1; then i=$(getent "$1" "$2" 2>/dev/null | cut -d: -f3)
  else i=$(awk -F: -v n="$2" '$1 == n { print $3; exit }' "/etc/$1" 2>/dev/null); fi
  case $i in ''|*[!0-9]*) i=- ;; esac
  printf '%s %s %s\\n' "$3" "$2" "$i"
}
# A <database> <kind> <name>...: each name's id, in order: from one getent, which answers
# one line a name in order when it knows them all (exit 0), else name by name.
A() {
  b=$1 n=$2; shift 2; k=$#
  if [ $k -gt 0 ] && command -v getent >/dev/null 2>&1 && G=$(getent "$b" "$@" 2>/dev/null); then
    set -f; IFS=$NL; set -- "$@" $G; unset IFS; set +f
    if [ $# = $((k * 2)) ]; then
      j=1
      while [ $j -le $k ]; do
        eval "v=\\\${$j} i=\\\${$((j + k))}"
        i=\${i#*:}; i=\${i#*:}; i=\${i%%:*}
        case $i in ''|*[!0-9]*) i=- ;; esac
        printf '%s %s %s\\n' "$n" "$v" "$i"
        j=$((j + 1))
      done
      return 0
    fi
  fi
  j=1
  while [ $j -le $k ]; do eval "a \\"\\$b\\" \\"\\\${$j}\\" \\"\\$n\\""; j=$((j + 1)); done
}
${accountAsks(names).join('\n')}
${packages && packages.length > 0 ? packageManager.surveyScript(packages) : ''}printf 'berth end\\n'
`;
}

/** A name is asked for only as a name can be spelled: it is quoted besides. */
const ACCOUNT_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$/;

function accountAsks(names?: AccountNames): string[] {
  if (!names) return [];
  const ask = (database: string, kind: string, asked: readonly string[]) => {
    for (const name of asked) {
      if (!ACCOUNT_NAME.test(name))
        throw new MachineError('failed', `${name} is not a name a ${kind} can have`);
    }
    return [`A ${database} ${kind}`, ...asked.map(quote)].join(' ');
  };
  return [ask('passwd', 'user', names.users), ask('group', 'group', names.groups), ACTOR];
}

/** s <uid> <gid>: the effective ids it runs as, read by the shell itself (no program). */
const ACTOR = `if [ -r /proc/self/status ]; then
while read -r k _ e _; do case $k in Uid:) U=$e;; Gid:) V=$e;; esac; done </proc/self/status
printf 's %s %s\\n' "$U" "$V"; fi`;

export function parseSurvey(
  paths: readonly SurveyPath[],
  stdout: Buffer,
  names?: AccountNames,
  packages?: readonly PackageAsk[],
): Survey {
  const text = stdout.toString('latin1').split('\n');
  const broken = (why: string) =>
    new MachineError('failed', `the survey's answer could not be read: ${why}`);
  const facts = new Map<string, PathFacts>();
  let at = 1; // Past REACHED.
  for (const [index, asked] of paths.entries()) {
    const line = text[at++];
    const [number, what, ...rest] = line?.split(' ') ?? [];
    if (number !== String(index) || what === undefined) throw broken(`no answer for ${asked.path}`);
    if (what === 'missing') facts.set(asked.path, { kind: 'missing' });
    else if (what === 'other') facts.set(asked.path, { kind: 'other' });
    else if (what === 'unreadable') {
      facts.set(asked.path, {
        kind: 'unreadable',
        reason: Buffer.from(rest.join(' '), 'latin1').toString('utf8').trim(),
      });
    } else if (what === 'link') {
      const [uidText, hard, owner, where] = rest;
      const uid = Number(uidText);
      if (!Number.isInteger(uid) || where === undefined)
        throw broken(`a record for ${asked.path} is short`);
      facts.set(asked.path, {
        kind: 'link',
        at: Buffer.from(where, 'base64').toString('utf8'),
        uid,
        ...(owner === undefined || owner === 'UNKNOWN' ? {} : { owner }),
        ...(hard === '1' ? { hard: true as const } : {}),
      });
    } else {
      const [rawText, sizeText, uidText, gidText, emptyText] = rest;
      const raw = Number.parseInt(rawText ?? '', 16);
      const numbers = [sizeText, uidText, gidText].map((word) => Number(word));
      if (Number.isNaN(raw) || numbers.some((number) => !Number.isInteger(number))) {
        throw broken(`a record for ${asked.path} is short`);
      }
      const stat = {
        mode: (raw & 0o7777).toString(8).padStart(4, '0'),
        uid: Number(uidText),
        gid: Number(gidText),
      };
      if (what === 'dir') {
        facts.set(asked.path, { kind: 'directory', empty: emptyText === '1', ...stat });
        continue;
      }
      const file = { kind: 'file' as const, size: Number(sizeText), ...stat };
      if (what === 'file') {
        facts.set(asked.path, file);
        continue;
      }
      if (what !== 'read') throw broken(`a record for ${asked.path} says ${what}`);
      const encoded: string[] = [];
      let end: string | undefined;
      while (at < text.length) {
        const next = text[at++] as string;
        if (next === '.' || next === '!') {
          end = next;
          break;
        }
        encoded.push(next);
      }
      if (end === undefined) throw broken(`the bytes of ${asked.path} were cut off`);
      if (end === '!') {
        facts.set(asked.path, { kind: 'unreadable', reason: 'permission denied' });
        continue;
      }
      const bytes = new Uint8Array(Buffer.from(encoded.join(''), 'base64'));
      facts.set(asked.path, bytes.length > READ_LIMIT ? file : { ...file, bytes });
    }
  }
  /** The packages' lines, up to the end: read by the package manager's entry. */
  const withPackages = (survey: Survey): Survey => {
    if (!packages || packages.length === 0) {
      if (text[at] !== 'berth end') throw broken('it ended early');
      return survey;
    }
    const end = text.indexOf('berth end', at);
    if (end === -1) throw broken('it ended early');
    try {
      return Object.assign(survey, {
        packages: packageManager.readSurvey(packages, text.slice(at, end)),
      });
    } catch (error) {
      throw new MachineError('failed', (error as Error).message);
    }
  };
  if (!names) return withPackages(facts);
  const accounts = { users: new Map<string, number>(), groups: new Map<string, number>() };
  const asked = [
    ...names.users.map((name) => ['user', name] as const),
    ...names.groups.map((name) => ['group', name] as const),
  ];
  for (const [kind, name] of asked) {
    const [said, saidName, id] = text[at++]?.split(' ') ?? [];
    if (said !== kind || saidName !== name || id === undefined)
      throw broken(`no answer for the ${kind} ${name}`);
    if (id !== '-') (kind === 'user' ? accounts.users : accounts.groups).set(name, Number(id));
  }
  // Who it runs as: absent where /proc is not there to say.
  const ran = /^s ([0-9]+) ([0-9]+)$/.exec(text[at] ?? '');
  const actor = ran ? { uid: Number(ran[1]), gid: Number(ran[2]) } : undefined;
  if (ran) at++;
  return withPackages(
    Object.assign(facts, { accounts: actor ? { ...accounts, actor } : accounts }),
  );
}

/** Whether the far side ran berth's script: its answer starts with REACHED. */
export function reached(stdout: Buffer): boolean {
  return stdout.subarray(0, REACHED.length + 1).equals(Buffer.from(`${REACHED}\n`));
}

/** A change as the words of its failure name it. */
export function whatOf(change: Change): string {
  return `${change.kind === 'file' ? 'write' : 'create'} ${change.path}`;
}

/** Why a change cannot be shipped as it is, if it cannot. */
export function refusal(change: Change): MachineError | undefined {
  const wrongPath = pathRefusal(change.path);
  if (wrongPath) return wrongPath;
  if (change.kind === 'file' && change.path === '/')
    return new MachineError('failed', '/ is a directory, not a file to write');
  const { uid, gid, mode } = change.options ?? {};
  if ([uid, gid, mode].some((id) => id !== undefined && !(Number.isInteger(id) && id >= 0)))
    return new MachineError('failed', `${whatOf(change)}: mode, uid and gid are whole numbers`);
  return undefined;
}

/** How many changes the batch's answer says were done: `done <index>` lines, in order. */
export function doneIn(stdout: Buffer, shipped: number): number {
  const said = stdout.toString('latin1').split('\n').slice(1);
  let done = 0;
  while (done < shipped && said[done] === `done ${done}`) done++;
  return done;
}

/**
 * The batch script: each change in order, `done <index>` on standard output as it is
 * done, and at the first failure the end, its words the last on standard error (a link
 * berth will not follow as `berth-link <uid> <owner> <where, base64>`). Every change is made
 * from inside its directory, walked to (WALK; the missing directories made as they are
 * reached), on names relative to it. A directory: its owner and mode set on `.`. A file: the
 * sweep of a dead write's temporary files beside it, the data (base64 in a here-document: on
 * stdin, never on a command line or in an environment) into a new temporary file opened on a
 * descriptor under umask 077 (only it is born private), its owner and mode set through the
 * descriptor. Files staged one after another share one sync of their data, then take their
 * names in order by rename, then share one sync of their file systems; they take their names
 * before anything after them is done, a failure after them included. Each program it runs
 * costs the far side a process (about a millisecond): a test in the shell spares one where
 * it can.
 */
export function applyScript(changes: readonly Change[]): string {
  const body: string[] = [];
  let staged: string[] = [];
  for (const [index, change] of changes.entries()) {
    const { path } = change;
    const { uid, gid } = change.options ?? {};
    const owner =
      uid === undefined && gid === undefined
        ? ''
        : `${uid ?? ''}${gid === undefined ? '' : `:${gid}`}`;
    if (change.kind === 'directory') {
      const mode = change.options?.mode;
      body.push(
        `m ${index} ${quote(path)} ${quote(owner)} ${mode === undefined ? "''" : octal(mode)}`,
      );
      staged = [];
      continue;
    }
    // A file staged on a path a staged one stands on, or under, takes its turn after it.
    if (staged.some((other) => other === path || inside(other, path) || inside(path, other))) {
      body.push('r');
      staged = [];
    }
    staged.push(path);
    const temporary = `.${posix.basename(path)}.${randomBytes(6).toString('hex')}.tmp`;
    const encoded = Buffer.from(change.data)
      .toString('base64')
      .replace(/.{1,76}/g, '$&\n');
    body.push(
      `s ${index} ${quote(path)} ${quote(temporary)} ${quote(owner)} ${octal(change.options.mode)} <<'berth-data-end'\n${encoded}berth-data-end`,
    );
  }
  return `set -C
printf '${REACHED}\\n'
NL='
'
${WALK}${APPLY}${body.join('\n')}
r
`;
}

/** The batch's functions: a directory (m), a file staged (s), the staged ones renamed (r). */
const APPLY = `u=$(umask)
P= G=0
# e <words>: a failure's words, on standard error: the last of them are the refusal's.
e() { printf '%s\\n' "$*" >&2; }
# y <path>: the words of a walk to the path that did not end in its directory.
y() {
  case $W in
    link*)
      set -- $W
      e "berth-link $2 $(N "$2") $(B "\${W#link * }")" ;;
    missing|notdir|leaf) e "$1: a name on the way is not a directory" ;;
    raced*) e "\${W#raced }: it changed while berth walked to it; nothing was done there" ;;
    *) e "\${W#unreadable }" ;;
  esac
}
# r: the staged files: their data synced, each renamed in its directory, walked to again
# (the name must still be the file berth opened, and so must the new name be after),
# then their file systems synced, which holds the directories.
r() {
  [ -n "$P" ] || return 0
  set --
  for i in $P; do eval "set -- \\"\\$@\\" /proc/self/fd/\\$o$i"; done
  { sync -- "$@" || sync; } 2>/dev/null
  set --; N= K=0
  for i in $P; do
    eval "f=\\$f$i d=\\$d$i t=\\$t$i o=\\$o$i"
    if [ $K = 0 ]; then
      if ! w "$d" 0; then
        y "$d"
      elif [ -L "./$t" ] || ! [ "./$t" -ef /proc/self/fd/$o ]; then
        e "$d/$t: the temporary file was replaced while berth wrote it"
      elif ! v=$(mv -fT -- "./$t" "./$f" 2>&1); then
        e "$d/$f: \${v##*: }"
      elif [ -L "./$f" ] || ! [ "./$f" -ef /proc/self/fd/$o ]; then
        e "$d/$f: it was replaced as berth renamed its file there"
      else
        N="$N $i"; set -- "$@" /proc/self/fd/$o; continue
      fi
      K=1
    fi
    if [ "$C" = "$d" ]; then rm -f -- "./$t"; fi
  done
  [ $# = 0 ] || sync -f -- "$@" 2>/dev/null || :
  for i in $P; do eval "o=\\$o$i"; eval "exec $o>&-"; done
  P= G=0
  for i in $N; do printf 'done %s\\n' "$i"; done
  [ $K = 0 ] || exit 1
}
# x: a change failed: the files staged before it take their names, then the end.
x() { r; exit 1; }
# m <index> <path> <owner> <mode>: a directory, after the files staged before it: walked
# to (made where missing), then its owner and mode set on \`.\`, the directory walked to.
m() {
  r
  w "$2" 1 || { y "$2"; x; }
  if [ -n "$3" ] && ! v=$(chown -- "$3" . 2>&1); then e "$2: \${v##*: }"; x; fi
  if [ -n "$4" ] && ! v=$(chmod -- "$4" . 2>&1); then e "$2: \${v##*: }"; x; fi
  printf 'done %s\\n' "$1"
}
# s <index> <path> <temporary name> <owner> <mode>: a file's data, from stdin, staged beside
# it: in its directory walked to, a new temporary file opened on a descriptor (noclobber,
# umask 077), written, and given its owner and mode through /proc/self/fd: the file opened,
# never a name looked up again. Seven are staged at most (descriptors 3 to 9).
s() {
  [ $G -lt 7 ] || r
  d=\${2%/*}; d=\${d:-/}; n=\${2##*/}
  w "$d" 1 || { y "$d"; x; }
  if [ -d "./$n" ] && [ ! -L "./$n" ]; then e "$2: Is a directory"; x; fi
  for g in ./."$n".*.tmp; do
    case \${g##*/} in ."$n".[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f].tmp) rm -f -- "$g" ;; esac
  done
  o=$((G + 3))
  umask 077
  if ! command eval "exec $o>\\"./\\$3\\""; then umask "$u"; e "$d/$3: the temporary file could not be made"; x; fi
  umask "$u"
  if ! base64 -d >&$o; then v="$2: its data could not be written"
  elif [ -n "$4" ] && ! v=$(chown -- "$4" /proc/self/fd/$o 2>&1); then v="$2: \${v##*: }"
  elif [ "$5" != 0600 ] && ! v=$(chmod -- "$5" /proc/self/fd/$o 2>&1); then v="$2: \${v##*: }"
  else
    eval "f$1=\\$n d$1=\\$d t$1=\\$3 o$1=\\$o"
    P="$P $1" G=$((G + 1))
    return 0
  fi
  rm -f -- "./$3"; eval "exec $o>&-"; e "$v"; x
}
`;

/** A mode as chmod takes it: four octal digits. */
function octal(mode: number): string {
  return mode.toString(8).padStart(4, '0');
}

/** Whether `path` is under the directory `dir`. */
function inside(dir: string, path: string): boolean {
  return path.startsWith(dir === '/' ? '/' : `${dir}/`);
}

/**
 * Stops a hook's process group on the far side: SIGTERM, then SIGKILL to whatever of it
 * is still there after STOP_GRACE_MS (a hook may ignore SIGTERM).
 */
export function stopScript(pgid: number): string {
  const tenths = Math.ceil(STOP_GRACE_MS / 100);
  return `kill -TERM -${pgid} 2>/dev/null || exit 0
i=0
while kill -0 -${pgid} 2>/dev/null && [ $i -lt ${tenths} ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL -${pgid} 2>/dev/null
:
`;
}

/** The PATH a hook runs with, whatever the login's: the system's own directories. */
const HOOK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The hook's wrapper: starts the hook with `sh -c` under `setsid` (a process group of its
 * own, its output and errors on ssh's standard output) in a clean environment (`env -i`:
 * PRODUCT.md's PATH, the far side's LANG from /etc/default/locale else C.UTF-8, the HOME of
 * the user it runs as, and `env`; nothing of the login's, which may hold the operator's or
 * sudo's), and tells berth on standard error the group (`berth-run <pgid>`) and then the
 * hook's exit status (`berth-exit <code>`). Only berth's own variables, never a secret, are
 * on env's command line.
 */
export function runScript(script: string, env: Record<string, string>): string {
  const assignments = Object.entries(env).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new MachineError('failed', `${name} cannot be the name of an environment variable`);
    }
    return quote(`${name}=${value}`);
  });
  return `cd / || exit 1
command -v setsid >/dev/null 2>&1 || { echo '${NO_SETSID}' >&2; exit 3; }
l=$(sed -n 's/^LANG=["'"'"']\\{0,1\\}\\([^"'"'"']*\\).*/\\1/p' /etc/default/locale 2>/dev/null)
n=$(id -un 2>/dev/null)
case $n in ''|*[!A-Za-z0-9_.-]*) h=/ ;; *) eval "h=~$n" ;; esac
case $h in /*) ;; *) h=/ ;; esac
setsid env -i PATH=${HOOK_PATH} "LANG=\${l:-C.UTF-8}" "HOME=$h" ${assignments.join(' ')} sh -c ${quote(script)} </dev/null 2>&1 &
pid=$!
printf 'berth-run %s\\n' "$pid" >&2
wait "$pid"
printf 'berth-exit %s\\n' "$?" >&2
`;
}
