// Preloaded into a timed child: writes what it used (its peak resident set in KiB, its CPU
// time in user space and in the kernel in µs, all its threads) where the bench asked.
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  const { maxRSS, userCPUTime, systemCPUTime } = process.resourceUsage();
  writeFileSync(
    process.env.BERTH_BENCH_USAGE,
    JSON.stringify({ maxRSS, userCPUTime, systemCPUTime }),
  );
});
