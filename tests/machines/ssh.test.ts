/**
 * The Machine contract on ssh machines, against the test fleet's real sshd hosts: one that
 * logs in as root, and one that logs in as a user and gets root through `sudo -n`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { type SshMachine, sshMachine } from '../../src/machines/ssh-machine.ts';
import { type Fleet, type FleetHost, fleetUnavailable, startFleet } from '../fleet/fleet.ts';
import { machineContract } from './contract.ts';

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = fleetUnavailable();

describe('ssh machines on the fleet', () => {
  let fleet: Fleet;
  let runtimeDir: string;
  const made: SshMachine[] = [];

  before(async () => {
    if (skip) return;
    fleet = await startFleet({ hosts: 2 });
    runtimeDir = await mkdtemp(join(tmpdir(), 'berth-ssh-test-'));
  });
  after(async () => {
    if (skip) return;
    // Masters first: none may outlive the test, nor wait on a host that is gone.
    await Promise.all(made.map((machine) => machine.exit()));
    await fleet?.stop();
    if (runtimeDir) await rm(runtimeDir, { recursive: true, force: true });
  });

  const machineOn = (host: FleetHost, options: { sudo?: boolean; port?: number } = {}) => {
    const machine = sshMachine({
      node: host.name,
      destination: host.name,
      runtimeDir,
      sshConfig: fleet.sshConfig,
      sudo: options.sudo ?? host.sudo,
      port: options.port,
    });
    made.push(machine);
    return machine;
  };

  const subjectOn = (name: string) => async () => {
    const host = fleet.host(name);
    return {
      machine: machineOn(host),
      root: '/',
      exec: async (script: string) => {
        const result = await host.exec(script);
        if (result.code !== 0) throw new Error(`on ${name}: ${script}: ${result.stderr}`);
        return result.stdout;
      },
      // Port 1: nothing listens there, so ssh is refused.
      unreachable: machineOn(host, { port: 1 }),
      // The sudo host's user without sudo may not look everywhere.
      unprivileged: host.sudo ? machineOn(host, { sudo: false }) : undefined,
      cleanup: async () => {},
    };
  };

  machineContract('ssh, logged in as root', subjectOn('alpha'), skip);
  machineContract('ssh, a user through sudo -n', subjectOn('bravo'), skip);
});
