/**
 * The application's pages. Plain functions from data to HTML; no request objects. Inline scripts
 * and styles are absent so the strict Content-Security-Policy holds.
 */
import { APPLICATION_NAME } from '../application-name.js'
import type { Claim } from '../auth/principal.js'
import { html, type SafeHtml } from './html.js'

export const APPLICATION_TITLE = APPLICATION_NAME

export interface LayoutOptions {
  readonly title: string
  readonly userName?: string | undefined
}

export function layout (options: LayoutOptions, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} - ${APPLICATION_TITLE}</title>
<link rel="stylesheet" href="/css/site.css">
<link rel="icon" href="/favicon.ico">
</head>
<body>
<header><a class="brand" href="/">${APPLICATION_TITLE}</a>${options.userName === undefined ? '' : html`<span class="user">Signed in as ${options.userName}</span>`}</header>
<main>
${body}
</main>
</body>
</html>
`.value
}

export interface LoginProvider {
  readonly scheme: string
  readonly displayName: string
  readonly available: boolean
}

export interface LoginPageModel {
  readonly providers: readonly LoginProvider[]
  readonly returnUrl?: string | undefined
  /** A fixed, safe message after a failed sign-in flow. */
  readonly failureMessage?: string | undefined
}

export const NO_PROVIDER_STATEMENT = 'No sign-in provider is configured for this application.'

export function loginPage (model: LoginPageModel): string {
  const failure = model.failureMessage === undefined ? '' : html`<p class="alert" role="alert">${model.failureMessage}</p>`
  if (model.providers.length === 0) {
    return layout({ title: 'Sign in' }, html`<h1>Sign in</h1>
${failure}
<p id="no-provider">${NO_PROVIDER_STATEMENT}</p>`)
  }
  const items = model.providers.map((provider) => {
    const query = new URLSearchParams({ provider: provider.scheme })
    if (model.returnUrl !== undefined) query.set('returnUrl', model.returnUrl)
    return provider.available
      ? html`<li><a class="provider" data-provider="${provider.scheme}" href="/External/Challenge?${query.toString()}">${provider.displayName}</a></li>`
      : html`<li><span class="provider unavailable" data-provider="${provider.scheme}">${provider.displayName} (unavailable)</span></li>`
  })
  return layout({ title: 'Sign in' }, html`<h1>Sign in</h1>
${failure}
<p>Choose how to sign in:</p>
<ul class="providers">${items}</ul>`)
}

export function accessDeniedPage (userName: string | undefined): string {
  return layout({ title: 'Access denied', userName }, html`<h1>Access denied</h1>
<p>You do not have permission to view this resource.</p>
<p><a href="/">Return to the start page</a></p>`)
}

export interface ErrorPageModel {
  readonly statusCode: number
  readonly title: string
  readonly requestId: string
  /** Development only: the exception detail. */
  readonly detail?: string | undefined
}

export function errorPage (model: ErrorPageModel): string {
  return layout({ title: model.title }, html`<h1>${model.statusCode} ${model.title}</h1>
<p>The request could not be completed.</p>
<p>Request id: <code id="request-id">${model.requestId}</code></p>
${model.detail === undefined ? '' : html`<pre class="detail">${model.detail}</pre>`}
<p><a href="/">Return to the start page</a></p>`)
}

export interface HomePageModel {
  readonly userName: string
  /** The provider's display name (DisplayName), not its scheme. */
  readonly providerName: string
  readonly claims: readonly Claim[]
  readonly csrfToken: string
}

/** The starter page for a signed-in user: who, through which provider, their claims, sign out. */
export function homePage (model: HomePageModel): string {
  const rows = model.claims.map((claim) => html`<tr><td>${claim.type}</td><td>${claim.value}</td><td>${claim.issuer}</td></tr>`)
  return layout({ title: 'Home', userName: model.userName }, html`<h1>Welcome, <span id="user-name">${model.userName}</span></h1>
<p id="signed-in-with">Signed in with ${model.providerName}.</p>
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
export function publicHomePage (): string {
  return layout({ title: 'Home' }, html`<h1>Welcome</h1>
<p id="public-notice">This page is public: application authentication is off, so routes without authorization metadata need no sign-in.</p>
<p>Nobody is signed in, and this application has no sign-in yet.</p>`)
}

/**
 * After the local sign-out, on the way to the provider's logout endpoint (OIDC end_session,
 * SAML2 SingleLogoutService). A page, not a redirect: the logout form's POST may only lead to
 * this origin (CSP form-action 'self', which Chromium applies to redirects too); a meta refresh
 * is a new navigation. No script.
 */
export function providerSignOutPage (model: { readonly url: string, readonly displayName: string }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0;url=${model.url}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Signing out - ${APPLICATION_TITLE}</title>
<link rel="stylesheet" href="/css/site.css">
</head>
<body>
<header><a class="brand" href="/">${APPLICATION_TITLE}</a></header>
<main>
<h1>Signed out</h1>
<p>You are signed out of this application. Continuing to sign out at ${model.displayName}…</p>
<p><a id="continue-sign-out" href="${model.url}">Continue</a></p>
</main>
</body>
</html>
`.value
}
