/**
 * The signed-in user's sessions page (`/Account/Sessions`): one row per live session (device,
 * provider, when it started, last activity), "this device" for the current one, a form to end each
 * other one and one to end all others. Plain data to HTML on the app's branded layout; no script.
 */
import { html, type SafeHtml } from './html.js'
import type { LayoutOptions } from './pages.js'

export interface SessionRow {
  readonly sessionAuditId: string
  readonly providerName: string
  readonly device: string
  /** Seconds since the epoch. */
  readonly startedAt: number
  readonly lastSeenAt: number
  readonly current: boolean
}

export interface SessionsPageModel {
  readonly userName: string | undefined
  readonly sessions: readonly SessionRow[]
  /** Live sessions in all (more than the rows when the list was cut to the newest). */
  readonly total: number
  readonly csrfToken: string
}

/** `2026-11-25 18:20 UTC`, in a `<time>` element with the ISO value. */
function time (seconds: number): SafeHtml {
  const iso = new Date(seconds * 1000).toISOString()
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`
}

export function sessionsPage (layout: (options: LayoutOptions, body: SafeHtml) => string, model: SessionsPageModel): string {
  const token = html`<input type="hidden" name="__RequestVerificationToken" value="${model.csrfToken}">`
  const rows = model.sessions.map((session) => html`<tr data-session="${session.sessionAuditId}"${session.current ? html` class="current"` : ''}>
<td>${session.device}</td><td>${session.providerName}</td><td>${time(session.startedAt)}</td><td>${time(session.lastSeenAt)}</td>
<td>${session.current
    ? html`<strong class="this-device">This device</strong>`
    : html`<form method="post" action="/Account/Sessions/End">${token}<input type="hidden" name="sessionAuditId" value="${session.sessionAuditId}"><button type="submit" class="end-session">Sign out</button></form>`}</td>
</tr>`)
  const others = model.sessions.some((session) => !session.current) || model.total > model.sessions.length
  const count = model.total === 1 ? 'You are signed in on 1 device.' : `You are signed in on ${model.total} devices.`
  const shown = model.total > model.sessions.length ? html` <span id="sessions-shown">The newest ${model.sessions.length} are shown.</span>` : ''
  return layout({ title: 'Your sessions', userName: model.userName }, html`<h1>Your sessions</h1>
<p><span id="session-count">${count}</span>${shown}</p>
<table class="sessions"><thead><tr><th>Device</th><th>Signed in with</th><th>Signed in</th><th>Last active</th><th></th></tr></thead>
<tbody>${rows}</tbody></table>
${others ? html`<form method="post" action="/Account/Sessions/EndOthers">${token}<button type="submit" id="end-other-sessions">Sign out all other sessions</button></form>` : ''}
<p><a href="/">Return to the start page</a></p>`)
}
