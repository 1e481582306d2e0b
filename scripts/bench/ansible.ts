// The Ansible side of the comparisons over ssh: the same work as berth's `app` module (ten
// files with secrets, two data directories, a start hook) as a playbook, run by Debian's
// ansible with pipelining, ControlPersist and the fleet's ssh config. Its paths are its
// own (`ans`), so berth and Ansible can work the same hosts side by side.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanEnv, log } from './stats.ts';

/** The work in berth's words: ten secret files, two data directories, a hook. */
export const APP = {
  description: 'ten files with secrets, two data directories, a start hook',
  data: ['/var/lib/berth-test/app/data1', '/var/lib/berth-test/app/data2'],
  secrets: Object.fromEntries(
    Array.from({ length: 10 }, (_, i) => [`s${i + 1}`, { path: `/etc/berth-test/app/s${i + 1}` }]),
  ),
  start: 'touch /var/lib/berth-test/app.started',
};

/** The same work as a playbook; each secret minted once per host, as berth mints its own. */
const PLAYBOOK = `- hosts: all
  gather_facts: false
  tasks:
    - name: data directories
      ansible.builtin.file:
        path: "/var/lib/berth-test/ans/{{ item }}"
        state: directory
      loop: [data1, data2]
    - name: secrets directory
      ansible.builtin.file:
        path: /etc/berth-test/ans
        state: directory
    - name: ten files with secrets
      ansible.builtin.copy:
        dest: "/etc/berth-test/ans/s{{ item }}"
        content: "{{ lookup('ansible.builtin.password', 'creds/' ~ inventory_hostname ~ '-s' ~ item ~ ' length=32 chars=ascii_letters,digits') }}"
        mode: "0600"
      loop: "{{ range(1, 11) | list }}"
    - name: start hook
      ansible.builtin.command:
        cmd: touch /var/lib/berth-test/ans.started
        creates: /var/lib/berth-test/ans.started
`;

/** Why Ansible cannot be run here, or undefined; installs Debian's when it is missing. */
export function ansibleAvailable(): string | undefined {
  const has = () => spawnSync('ansible-playbook', ['--version'], { stdio: 'ignore' }).status === 0;
  if (has()) return undefined;
  if (!existsSync('/usr/bin/apt-get')) return 'no ansible-playbook, and no apt-get to install it';
  log('installing Debian ansible with apt-get');
  const install = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'ansible'], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: 'ignore',
  });
  return install.status === 0 && has() ? undefined : 'ansible could not be installed with apt-get';
}

export interface AnsibleProject {
  /** Where its ControlMaster sockets are: ended by the caller with berth's. */
  controlDir: string;
  /** One `ansible-playbook` run over every host, its wall time in ms; throws if it failed. */
  run(): Promise<number>;
}

/**
 * A playbook project in `dir` over `hosts` (names the ssh config resolves), those in
 * `sudo` through become, `forks` at once; its playbook the `app` module's work unless said.
 */
export async function ansibleProject(options: {
  dir: string;
  hosts: readonly string[];
  sudo: readonly string[];
  sshConfig: string;
  forks: number;
  playbook?: string;
}): Promise<AnsibleProject> {
  const { dir, hosts, sudo, sshConfig, forks, playbook = PLAYBOOK } = options;
  const controlDir = await mkdtemp('/tmp/bfa-');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'playbook.yml'), playbook);
  await writeFile(
    join(dir, 'inventory.ini'),
    `${hosts.map((host) => `${host}${sudo.includes(host) ? ' ansible_become=true' : ''}`).join('\n')}\n\n[all:vars]\nansible_python_interpreter=/usr/bin/python3\n`,
  );
  const config = join(dir, 'ansible.cfg');
  await writeFile(
    config,
    [
      '[defaults]',
      'inventory = inventory.ini',
      `forks = ${forks}`,
      'host_key_checking = True',
      'interpreter_python = /usr/bin/python3',
      'retry_files_enabled = False',
      '[ssh_connection]',
      'pipelining = True',
      `ssh_args = -F ${sshConfig} -o ControlMaster=auto -o ControlPersist=60s`,
      `control_path_dir = ${controlDir}`,
      '',
    ].join('\n'),
  );
  return {
    controlDir,
    async run() {
      const started = performance.now();
      const result = spawnSync('ansible-playbook', ['playbook.yml'], {
        cwd: dir,
        env: { ...cleanEnv({ ANSIBLE_CONFIG: config }), SSH_AUTH_SOCK: '' },
        encoding: 'utf8',
        timeout: 2_400_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      const ms = performance.now() - started;
      if (result.status !== 0)
        throw new Error(`ansible-playbook failed (${result.status}): ${result.stdout.slice(-800)}`);
      return ms;
    },
  };
}
