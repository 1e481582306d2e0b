// Preloaded into a timed child: writes its peak resident set (KiB) where the bench asked.
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  writeFileSync(process.env.BERTH_BENCH_RSS, String(process.resourceUsage().maxRSS));
});
