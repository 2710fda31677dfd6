/**
 * The app's own pages: the starter page `/` for a signed-in user, and its public variant. They use
 * the core's branded layout (`app.pages.layout`) and its escaping `html` tag; no inline script or
 * style (the Content-Security-Policy forbids them).
 */
import { html, type Claim, type Pages } from '@project-template/core'

export interface HomePageModel {
  readonly userName: string
  /** The provider's display name (DisplayName), not its scheme. */
  readonly providerName: string
  readonly claims: readonly Claim[]
  readonly csrfToken: string
}

/** The starter page for a signed-in user: who, through which provider, their claims, sign out. */
export function homePage (layout: Pages['layout'], model: HomePageModel): string {
  const rows = model.claims.map((claim) => html`<tr><td>${claim.type}</td><td>${claim.value}</td><td>${claim.issuer}</td></tr>`)
  return layout({ title: 'Home', userName: model.userName }, html`<h1>Welcome, <span id="user-name">${model.userName}</span></h1>
<p id="signed-in-with">Signed in with ${model.providerName}.</p>
<p><a id="sessions" href="/Account/Sessions">Your sessions on other devices</a></p>
<h2>Your claims</h2>
<table class="claims"><thead><tr><th>Type</th><th>Value</th><th>Issuer</th></tr></thead><tbody>${rows}</tbody></table>
<form method="post" action="/Account/Logout">
<input type="hidden" name="__RequestVerificationToken" value="${model.csrfToken}">
<button type="submit" id="logout">Sign out</button>
</form>
<form method="post" action="/Account/LogoutEverywhere">
<input type="hidden" name="__RequestVerificationToken" value="${model.csrfToken}">
<button type="submit" id="logout-everywhere">Sign out everywhere</button>
</form>`)
}

/**
 * The starter page when nobody is signed in and the page is public (the `--authProvider none`
 * posture, or the fallback policy turned off): no user, no claims, no sign-out.
 */
export function publicHomePage (layout: Pages['layout']): string {
  return layout({ title: 'Home' }, html`<h1>Welcome</h1>
<p id="public-notice">This page is public: application authentication is off, so routes without authorization metadata need no sign-in.</p>
<p>Nobody is signed in, and this application has no sign-in yet.</p>`)
}
