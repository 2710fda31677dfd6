/**
 * The signed-in user's sessions page (`/Account/Sessions`): one row per live session (device,
 * provider, when it started, last activity), "this device" for the current one, a form to end each
 * other one and one to end all others. Plain data to HTML on the app's branded layout; no script.
 * The table scrolls sideways inside its own focusable region on a narrow screen; each row's button
 * is named for its device ("Sign out Chrome on Linux, last active ...") for a screen reader.
 */
import { html, type SafeHtml } from './html.js'
import type { LayoutOptions } from './pages.js'
import { timeElement as time, timeText } from './time.js'

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

export function sessionsPage (layout: (options: LayoutOptions, body: SafeHtml) => string, model: SessionsPageModel): string {
  const token = html`<input type="hidden" name="__RequestVerificationToken" value="${model.csrfToken}">`
  const rows = model.sessions.map((session) => html`<tr data-session="${session.sessionAuditId}"${session.current ? html` class="current"` : ''}>
<td>${session.device}</td><td>${session.providerName}</td><td>${time(session.startedAt)}</td><td>${time(session.lastSeenAt)}</td>
<td>${session.current
    ? html`<strong class="this-device">This device</strong>`
    : html`<form method="post" action="/Account/Sessions/End">${token}<input type="hidden" name="sessionAuditId" value="${session.sessionAuditId}"><button type="submit" class="end-session" aria-label="Sign out ${session.device}, last active ${timeText(session.lastSeenAt)}">Sign out</button></form>`}</td>
</tr>`)
  const others = model.sessions.some((session) => !session.current) || model.total > model.sessions.length
  const count = model.total === 1 ? 'You are signed in on 1 device.' : `You are signed in on ${model.total} devices.`
  const shown = model.total > model.sessions.length ? html` <span id="sessions-shown">The newest ${model.sessions.length} are shown.</span>` : ''
  return layout({ title: 'Your sessions', userName: model.userName }, html`<h1 id="sessions-heading">Your sessions</h1>
<p><span id="session-count">${count}</span>${shown}</p>
<div class="table-scroll" role="region" aria-labelledby="sessions-heading" tabindex="0">
<table class="sessions"><thead><tr><th scope="col">Device</th><th scope="col">Signed in with</th><th scope="col">Signed in</th><th scope="col">Last active</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>${rows}</tbody></table>
</div>
<div class="actions">
${others ? html`<form method="post" action="/Account/Sessions/EndOthers">${token}<button type="submit" id="end-other-sessions" class="danger">Sign out all other sessions</button></form>` : ''}
<a href="/">Return to the start page</a>
</div>`)
}
