/**
 * The core's stylesheet, served at {@link CORE_STYLESHEET_PATH} by the static-files plugin (ahead
 * of routing, like the app's public/ files) and linked by every page the core renders. A file, not
 * an inline `<style>`: the Content-Security-Policy allows styles from 'self' only.
 *
 * Light and dark follow `prefers-color-scheme`. An app brands the pages from its own stylesheet
 * (`/css/site.css`, linked after this one) by setting the custom properties on `:root`:
 * `--pt-accent` (buttons, links, focus ring) and `--pt-on-accent` (text on it), and for each scheme
 * `--pt-background`, `--pt-surface`, `--pt-text`, `--pt-muted`, `--pt-border`, `--pt-danger`.
 * The defaults meet WCAG 2.1 AA contrast in both schemes; an app that changes them keeps that
 * (the core's accessibility test runs axe-core on the pages in Chromium).
 */
import { sha256Base64url } from '../sha256.js'

/** Where the stylesheet is served; fixed, so an app's own layout can link it too. */
export const CORE_STYLESHEET_PATH = '/_core/site.css'

export const CORE_STYLESHEET = `/* @project-template/core pages: ${CORE_STYLESHEET_PATH} */
:root {
  color-scheme: light dark;
  --pt-accent: #1f5fbf;
  --pt-on-accent: #ffffff;
  --pt-background: #f3f5f8;
  --pt-surface: #ffffff;
  --pt-text: #1b1f24;
  --pt-muted: #4f5863;
  --pt-border: #c9d0d8;
  --pt-danger: #a3192d;
  --pt-danger-surface: #fdecee;
  --pt-radius: .5rem;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  line-height: 1.5;
}
@media (prefers-color-scheme: dark) {
  :root {
    --pt-accent: #8ab4f8;
    --pt-on-accent: #0b1a33;
    --pt-background: #15181c;
    --pt-surface: #1f2329;
    --pt-text: #e8eaed;
    --pt-muted: #aeb6bf;
    --pt-border: #444c56;
    --pt-danger: #ff9aa5;
    --pt-danger-surface: #3a1c21;
  }
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0; min-height: 100vh; display: flex; flex-direction: column; background: var(--pt-background); color: var(--pt-text); }
a { color: var(--pt-accent); text-underline-offset: .15em; }
:focus-visible { outline: 3px solid var(--pt-accent); outline-offset: 2px; }
header { display: flex; flex-wrap: wrap; gap: .25rem 1rem; justify-content: space-between; align-items: center; padding: .75rem 1.5rem; background: var(--pt-surface); border-bottom: 1px solid var(--pt-border); }
header .brand { font-weight: 650; font-size: 1.125rem; text-decoration: none; color: var(--pt-text); }
header .user { color: var(--pt-muted); font-size: .9375rem; }
main { flex: 1; width: 100%; max-width: 60rem; margin: 0 auto; padding: 2rem 1.5rem; }
h1 { font-size: 1.625rem; line-height: 1.25; margin: 0 0 1rem; }
h2 { font-size: 1.25rem; margin: 1.5rem 0 .75rem; }
p { margin: 0 0 1rem; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .875em; }
.card { background: var(--pt-surface); border: 1px solid var(--pt-border); border-radius: var(--pt-radius); padding: 2rem; box-shadow: 0 1px 3px #0000001a; }
.card > :last-child { margin-bottom: 0; }
.card-narrow { max-width: 26rem; margin: 2rem auto; }
.card-page { max-width: 40rem; margin: 1rem auto; }
.muted { color: var(--pt-muted); }
.visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
button, .button, .continue > a, a.provider, span.provider {
  display: inline-flex; align-items: center; justify-content: center; min-height: 2.75rem; padding: .5rem 1.25rem;
  font: inherit; font-weight: 600; line-height: 1.25; text-align: center; text-decoration: none;
  border-radius: var(--pt-radius); border: 1px solid var(--pt-accent); cursor: pointer;
  background: var(--pt-accent); color: var(--pt-on-accent);
}
button:hover, .button:hover, .continue > a:hover, a.provider:hover { filter: brightness(1.08); }
button.secondary, button.end-session, a.provider { background: var(--pt-surface); color: var(--pt-accent); }
button.danger { background: var(--pt-surface); color: var(--pt-danger); border-color: var(--pt-danger); }
.providers { list-style: none; margin: 0 0 1rem; padding: 0; display: grid; gap: .625rem; }
.providers .provider { width: 100%; }
span.provider.unavailable { cursor: not-allowed; background: var(--pt-background); color: var(--pt-muted); border-color: var(--pt-border); border-style: dashed; }
.email-discovery { display: grid; gap: .5rem; margin: 0 0 1.25rem; }
.email-discovery label { font-weight: 600; }
input[type="email"], input[type="text"], input[type="number"] { width: 100%; min-height: 2.75rem; padding: .5rem .75rem; font: inherit; color: var(--pt-text); background: var(--pt-surface); border: 1px solid var(--pt-muted); border-radius: var(--pt-radius); }
.email-discovery button { width: 100%; }
.field { display: grid; gap: .375rem; margin: 0 0 1.25rem; }
.field > label, legend { font-weight: 600; }
.hint { margin: 0; font-size: .875rem; color: var(--pt-muted); }
fieldset { margin: 0 0 1.25rem; padding: .75rem 1rem 1rem; border: 1px solid var(--pt-border); border-radius: var(--pt-radius); }
legend { padding: 0 .25rem; }
.choice { display: flex; gap: .625rem; align-items: flex-start; margin: .5rem 0 0; }
.choice input { flex: none; width: 1.5rem; height: 1.5rem; margin: 0; accent-color: var(--pt-accent); }
.choice label { overflow-wrap: anywhere; }
[aria-invalid="true"] { border-color: var(--pt-danger); border-width: 2px; }
input.secret { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.key-schemes ul { list-style: none; display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; margin: 0 0 1rem; padding: 0; }
.key-schemes [aria-current="page"] { font-weight: 700; }
table.api-keys td form { margin: 0; }
table.api-keys button { white-space: nowrap; min-height: 2.25rem; padding: .25rem .875rem; }
table.api-keys td:first-child { overflow-wrap: anywhere; min-width: 8rem; }
.divider { display: flex; align-items: center; gap: .75rem; color: var(--pt-muted); }
.divider::before, .divider::after { content: ""; flex: 1; border-top: 1px solid var(--pt-border); }
.alert { padding: .75rem 1rem; border: 1px solid var(--pt-danger); border-left-width: 4px; border-radius: var(--pt-radius); background: var(--pt-danger-surface); color: var(--pt-text); }
pre.detail { font-family: inherit; font-size: 1rem; white-space: pre-wrap; overflow-wrap: anywhere; padding: .75rem 1rem; background: var(--pt-background); border: 1px solid var(--pt-border); border-radius: var(--pt-radius); }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; align-items: center; margin-top: 1.5rem; }
.actions form { margin: 0; }
.table-scroll { overflow-x: auto; margin: 0 0 1.25rem; border: 1px solid var(--pt-border); border-radius: var(--pt-radius); background: var(--pt-surface); }
table { border-collapse: collapse; width: 100%; }
th, td { padding: .625rem .875rem; text-align: left; vertical-align: middle; border-bottom: 1px solid var(--pt-border); }
thead th { font-size: .875rem; color: var(--pt-muted); background: var(--pt-background); }
tbody tr:last-child td { border-bottom: 0; }
table.sessions td form { margin: 0; }
table.sessions button { white-space: nowrap; min-height: 2.25rem; padding: .25rem .875rem; }
tr.current td { font-weight: 600; }
@media (max-width: 40rem) {
  header { padding: .625rem 1rem; }
  main { padding: 1.25rem 1rem; }
  .card { padding: 1.25rem; }
  .card-narrow { margin: .5rem auto; }
  h1 { font-size: 1.375rem; }
  th, td { padding: .5rem .625rem; font-size: .875rem; }
  .actions > *, .actions button, .actions .button { width: 100%; }
  /* Sessions: each row a block, the cells labelled (the header row is hidden), its button beside it. */
  table.sessions thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  table.sessions, table.sessions tbody { display: block; }
  table.sessions tr { display: grid; grid-template-columns: 1fr auto; column-gap: .75rem; padding: .75rem .875rem; border-bottom: 1px solid var(--pt-border); }
  table.sessions tbody tr:last-child { border-bottom: 0; }
  table.sessions td { display: block; grid-column: 1; padding: 0; border: 0; font-size: .875rem; color: var(--pt-muted); }
  table.sessions td:first-child { font-size: 1rem; color: var(--pt-text); }
  table.sessions td:nth-child(2)::before { content: "Signed in with "; }
  table.sessions td:nth-child(3)::before { content: "Signed in "; }
  table.sessions td:nth-child(4)::before { content: "Last active "; }
  table.sessions td:last-child { grid-column: 2; grid-row: 1 / span 4; align-self: center; color: var(--pt-text); }
}
`

/** A strong validator of the stylesheet, for `ETag` and conditional requests. */
export const CORE_STYLESHEET_ETAG = `"${sha256Base64url(CORE_STYLESHEET).slice(0, 22)}"`
