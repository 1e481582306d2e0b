import { linkWords, MachineError } from './machine.ts';

// ssh's failures in the operator's words: ssh's own last line, and what to do about it.

/** What one ssh call came back with. */
export interface Answer {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** The lines of what a program said, trimmed, the blank ones left out. */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replaceAll('\r', '').trim())
    .filter((line) => line.length > 0);
}

/** The refusal when the ssh command itself could not be started. */
export function noSsh(error: Error): MachineError {
  const code = (error as NodeJS.ErrnoException).code;
  return new MachineError(
    'unreachable',
    code === 'ENOENT'
      ? 'there is no ssh command here; install the OpenSSH client'
      : `ssh could not start: ${error.message}`,
  );
}

/** Whether the far side said it has no sh. */
export function noShell(said: string[], code: number): boolean {
  return (
    said.some(
      (line) =>
        /(^|[\s:])sh: (command )?not found$/.test(line) ||
        /(^|[\s:])sh: No such file or directory$/.test(line),
    ) ||
    (code === 127 && said.some((line) => /\bsh\b/.test(line)))
  );
}

/** ssh's own last words when it could not get there, with what the operator can do. */
export function sshWords(said: string[], all: string): string {
  const last = said.at(-1) ?? 'ssh failed and said nothing';
  /** ssh's line (said as ssh's), then what the operator can do about it. */
  const words = (line: string, todo: string) =>
    `${line.startsWith('ssh:') ? '' : 'ssh: '}${line.replace(/\.$/, '')}; ${todo}`;
  /** The line that says more than the last, "Host key verification failed.", and the last. */
  const withLast = (line: string | undefined) => (line && line !== last ? `${line} ${last}` : last);
  if (all.includes('REMOTE HOST IDENTIFICATION HAS CHANGED')) {
    const line = said.find((each) => /^Host key for \S+ has changed/.test(each));
    const host = line && /^Host key for (\S+) has changed/.exec(line)?.[1];
    return words(
      `REMOTE HOST IDENTIFICATION HAS CHANGED: ${withLast(line)}`,
      `if the host was reinstalled, remove the old key with ssh-keygen -R ${host ? `'${host}'` : 'HOST'} and add the new one after checking its fingerprint by hand; if it was not, someone may be in between`,
    );
  }
  const unknown = said.find((each) => /^No \S+ host key is known for \S+/.test(each));
  if (unknown || /Host key verification failed/.test(all)) {
    const host = unknown && /^No \S+ host key is known for (\S+)/.exec(unknown)?.[1];
    return words(
      withLast(unknown),
      `add its key to known_hosts (ssh-keyscan ${host ? keyscanArgs(host) : 'HOST'}, checked by hand against the host's own fingerprint)`,
    );
  }
  if (/Permission denied \(/.test(last)) {
    return words(
      last,
      'berth logs in without prompting (BatchMode): give ssh a key that this login accepts (the agent, or IdentityFile in ~/.ssh/config)',
    );
  }
  if (/Connection refused/.test(last)) {
    return words(last, 'check that sshd runs there and listens on that port (port in berth.json)');
  }
  if (/timed out/i.test(last)) {
    return words(last, 'check that the host is up, the address is right and sshd answers there');
  }
  if (/Could not resolve hostname/.test(last)) {
    return words(last, 'check the name in berth.json or its Host entry in ~/.ssh/config');
  }
  if (/No route to host|Network is unreachable/.test(last)) {
    return words(last, 'check the network between here and the host');
  }
  return last.startsWith('ssh:') ? last : `ssh: ${last}`;
}

/** `[host]:port` as known_hosts spells a host on another port, as ssh-keyscan wants it. */
function keyscanArgs(host: string): string {
  const bracketed = /^\[(.+)\]:(\d+)$/.exec(host);
  return bracketed ? `-p ${bracketed[2]} ${bracketed[1]}` : host;
}

/**
 * The refusal for a script that ran and failed: its last words on standard error. A batch
 * that met a link berth will not follow says `berth-link <uid> <owner> <where, base64>`,
 * told in linkWords about the change's path, as every machine tells it.
 */
export function failedAs(what: string, answer: Answer, path?: string): MachineError {
  const said = lines(answer.stderr).filter((line) => !line.startsWith('Warning: '));
  const last = said.at(-1) ?? `exit ${answer.code}`;
  const link = /^berth-link (\d+) (\S+) (\S+)$/.exec(last);
  if (link && path !== undefined) {
    const [, uid, owner, where] = link as unknown as [string, string, string, string];
    const fact = {
      at: Buffer.from(where, 'base64').toString('utf8'),
      uid: Number(uid),
      ...(owner === 'UNKNOWN' ? {} : { owner }),
    };
    return new MachineError('denied', linkWords(path, fact));
  }
  const denied = /Permission denied|Operation not permitted|Read-only file system/.test(last);
  return new MachineError(denied ? 'denied' : 'failed', `${what} failed: ${last}`);
}
