/** One example or two a command, shown by `berth help <command>`: what an operator types first. */
export const EXAMPLES: Record<string, readonly string[]> = {
  assign: ['  $ berth assign web1 gitea'],
  unassign: ['  $ berth unassign web1 gitea'],
  take: [
    '  $ berth take web1 gitea                       # preview: what would be taken',
    '  $ berth take web1 gitea --yes --digest <hex>  # act on that preview',
    '  $ berth take web1 gitea --yes                 # at a terminal: preview, then ask',
  ],
  converge: [
    '  $ berth converge web1                         # preview, ending with its digest',
    '  $ berth converge web1 --yes --digest <hex>    # act on that preview',
    '  $ berth converge @web --yes                   # at a terminal: preview, then ask',
    '  $ berth converge @web --out web.plan          # the preview as a plan file, to review',
  ],
  act: [
    '  $ berth act web.plan                          # act on exactly that plan, if nothing changed',
  ],
  adopt: ['  $ berth adopt web1'],
  forget: ['  $ berth forget web1 gitea'],
  api: ['  $ berth api --listen 127.0.0.1:8081 --issuer https://id.example.org'],
  view: ['  $ berth view', '  $ berth view --listen 127.0.0.1:9000'],
  status: ['  $ berth status', '  $ berth status web1 --check'],
  log: ['  $ berth log --json'],
  'copy-state': ['  $ berth copy-state --to postgresql://berth@db.lan/berth'],
  nodes: ['  $ berth nodes', '  $ berth nodes web1 --json'],
  modules: ['  $ berth modules', '  $ berth modules gitea'],
  validate: ['  $ berth validate --json'],
  completion: [
    '  $ source <(berth completion bash)',
    '  $ berth completion zsh > ~/.zfunc/_berth   # with ~/.zfunc in fpath',
    '  $ berth completion fish > ~/.config/fish/completions/berth.fish',
  ],
  openapi: ['  $ berth openapi > berth-api.json'],
  help: ['  $ berth help converge'],
};
