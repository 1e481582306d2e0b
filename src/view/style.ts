/**
 * The view's one style sheet, served at /view.css: light and dark by the reader's own
 * choice (prefers-color-scheme), a matrix that scrolls sideways on a phone with its
 * node column kept in sight, and colours that help words, never replace them.
 */
export const STYLE = `
:root { color-scheme: light dark;
  --bg: #fdfdfc; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --head: #f3f4f6;
  --ok: #116329; --ok-bg: #dafbe1; --add: #0550ae; --add-bg: #ddf4ff;
  --upd: #7d4e00; --upd-bg: #fff1c2; --bad: #a40e26; --bad-bg: #ffe3e6;
  --rel: #6639ba; --rel-bg: #f1e8ff; --link: #0550ae; }
@media (prefers-color-scheme: dark) { :root {
  --bg: #0d1117; --fg: #e6edf3; --muted: #9da7b3; --line: #30363d; --head: #161b22;
  --ok: #7ee787; --ok-bg: #0f2d1a; --add: #79c0ff; --add-bg: #0c2d4a;
  --upd: #e3b341; --upd-bg: #3a2a05; --bad: #ff9492; --bad-bg: #4a1219;
  --rel: #d2a8ff; --rel-bg: #2e1a4d; --link: #79c0ff; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
a { color: var(--link); }
.skip { position: absolute; left: -100vw; }
.skip:focus { left: .5rem; top: .5rem; padding: .25rem .5rem; background: var(--bg); z-index: 1; }
a:focus-visible, button:focus-visible, input:focus-visible, [tabindex]:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0 1.5rem;
  padding: .5rem 1rem; border-bottom: 1px solid var(--line); background: var(--head); }
.brand { margin: 0; font-weight: 700; }
nav ul { display: flex; gap: 1rem; margin: 0; padding: 0; list-style: none; }
nav a[aria-current] { font-weight: 700; text-decoration-thickness: 3px; }
main { padding: 1rem; max-width: 96rem; }
h1 { margin: .25rem 0 .5rem; font-size: 1.6rem; }
h2 { font-size: 1.15rem; margin: 1.25rem 0 .5rem; }
.lede { color: var(--muted); margin-top: 0; }
.tally { color: var(--fg); }
code, pre { font: 14px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.matrix, .journal { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; padding: .5rem .75rem; font-weight: 600; }
th, td { border-top: 1px solid var(--line); padding: .4rem .6rem; text-align: left; vertical-align: top; }
thead th { background: var(--head); white-space: nowrap; }
tbody th[scope=row] { position: sticky; left: 0; background: var(--bg); white-space: nowrap; }
tr.group th { background: var(--head); color: var(--muted); font-weight: 600; }
.cell ul, .outcome p { margin: .2rem 0 0; padding-left: 1rem; font-size: .8rem; color: var(--muted); max-width: 22rem; overflow-wrap: anywhere; }
.outcome p { padding: 0; }
.mark { display: inline-block; padding: 0 .4rem; border-radius: 4px; font-size: .85rem; font-weight: 600; white-space: nowrap; }
.in-sync .mark, .done .mark { color: var(--ok); background: var(--ok-bg); }
.install .mark { color: var(--add); background: var(--add-bg); }
.update .mark, .acting .mark { color: var(--upd); background: var(--upd-bg); }
.release .mark { color: var(--rel); background: var(--rel-bg); }
.blocked .mark, .refused .mark, .failed .mark, .check-failing .mark { color: var(--bad); background: var(--bad-bg); }
.none .mark, .unsurveyed .mark { color: var(--muted); font-weight: 400; }
.unsurveyed .mark { border: 1px dashed var(--muted); }
td.surveyed { font-size: .85rem; color: var(--muted); white-space: nowrap; }
.stale { margin: .2rem 0 0; font-size: .8rem; color: var(--upd); white-space: normal; max-width: 22rem; }
.survey { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: baseline; margin: 0 0 1rem; }
.survey .hint { font-size: .85rem; color: var(--muted); }
.surveying { color: var(--upd); }
.note { margin: .2rem 0 0; font-size: .8rem; font-weight: 400; color: var(--bad); white-space: normal; max-width: 22rem; }
.live { border: 1px solid var(--line); border-radius: 6px; padding: 0 .75rem .5rem; margin-bottom: 1rem; }
.live h2 { margin-top: .5rem; }
#live-log { margin: 0; padding-left: 1.25rem; }
#live-log:empty { display: none; }
.modules { display: flex; flex-wrap: wrap; gap: .5rem; padding: 0; list-style: none; }
.modules li { border: 1px solid var(--line); border-radius: 6px; padding: .2rem .5rem; }
pre { overflow-x: auto; padding: .75rem; border: 1px solid var(--line); border-radius: 6px; background: var(--head); }
pre.command { white-space: pre-wrap; overflow-wrap: anywhere; }
pre.command code { user-select: all; }
.digest { overflow-wrap: anywhere; }
.preview span { display: inline; }
.module { font-weight: 700; }
.blocked, .refusal { color: var(--bad); }
.diff-add { color: var(--ok); background: var(--ok-bg); }
.diff-del { color: var(--bad); background: var(--bad-bg); }
.diff-hunk { color: var(--rel); }
.diff-head { font-weight: 700; }
.diff-note, .digest-line { color: var(--muted); }
.filter { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: 1rem; }
.filter label { display: flex; flex-direction: column; font-size: .9rem; }
input, button { font: inherit; padding: .3rem .5rem; border: 1px solid var(--muted); border-radius: 4px; background: var(--bg); color: var(--fg); }
button { cursor: pointer; background: var(--head); }
details pre { max-height: 20rem; white-space: pre-wrap; }
@media (max-width: 40rem) { main { padding: .5rem; } h1 { font-size: 1.35rem; } th, td { padding: .3rem .4rem; } }
`;
