/**
 * Facts: what a node is, read as `{{fact NAME}}` by templates and as `BERTH_FACT_NAME` by
 * hooks. `node` and `host` are berth.json's; the rest the machine tells in the survey's
 * one round trip (a machine that cannot tell one leaves it out).
 */
export const FACT_NAMES = [
  'node',
  'host',
  'hostname',
  'fqdn',
  'address',
  'codename',
  'arch',
] as const;
export type FactName = (typeof FACT_NAMES)[number];

/** What a machine tells of itself: the facts berth.json does not hold. */
export const MACHINE_FACTS = ['hostname', 'fqdn', 'address', 'codename', 'arch'] as const;
export type MachineFactName = (typeof MACHINE_FACTS)[number];
export type MachineFacts = Partial<Record<MachineFactName, string>>;

/** A node's facts, each as text; one the machine could not tell is absent. */
export type Facts = Partial<Record<FactName, string>>;

export function isFactName(name: string): name is FactName {
  return (FACT_NAMES as readonly string[]).includes(name);
}

/**
 * Where berth reaches a node, as its `host` fact: an ssh destination without its user
 * (`admin@web1.lan` is `web1.lan`; a `Host` alias is the alias), `localhost` for a root.
 */
export function hostOf(entry: { root: string } | { ssh: string }): string {
  if ('root' in entry) return 'localhost';
  const destination = entry.ssh.startsWith('ssh://') ? hostOfUrl(entry.ssh) : entry.ssh;
  return destination.slice(destination.lastIndexOf('@') + 1);
}

/** `ssh://user@host:port` as ssh takes it: the host alone (an IPv6 address without its brackets). */
function hostOfUrl(url: string): string {
  try {
    return new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return url;
  }
}

/** A node's facts: its name and host from berth.json, the rest as its machine told them. */
export function nodeFacts(
  node: string,
  entry: { root: string } | { ssh: string },
  told: MachineFacts,
): Facts {
  const facts: Facts = { node, host: hostOf(entry) };
  for (const name of MACHINE_FACTS) {
    const value = told[name];
    if (value !== undefined && value !== '') facts[name] = value;
  }
  return facts;
}

/** The facts a machine's answer says, from its `fact <name> <text>` lines. */
export function readFactLines(lines: readonly string[]): MachineFacts {
  const told: MachineFacts = {};
  for (const line of lines) {
    const match = /^fact ([a-z]+) (.*)$/.exec(line);
    const name = match?.[1] as MachineFactName | undefined;
    if (name && (MACHINE_FACTS as readonly string[]).includes(name) && match?.[2])
      told[name] = match[2];
  }
  return told;
}
