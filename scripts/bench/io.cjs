// Preloaded into a timed child: writes the bytes it passed to write calls (wchar, from
// /proc/self/io) where the bench asked, so an act's writes can be weighed.
const { readFileSync, writeFileSync } = require('node:fs');

process.on('exit', () => {
  const io = readFileSync('/proc/self/io', 'utf8');
  const wchar = /^wchar: (\d+)$/m.exec(io)?.[1] ?? 'NaN';
  const syscw = /^syscw: (\d+)$/m.exec(io)?.[1] ?? 'NaN';
  writeFileSync(process.env.BERTH_BENCH_IO, `${wchar} ${syscw}`);
});
