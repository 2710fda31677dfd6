/**
 * A no-store page that navigates on to a local URL (meta refresh, and a link without it). E-mail
 * discovery answers a browser's form submission with it: the app's Content-Security-Policy has
 * form-action 'self', which Chromium applies to every redirect after a form submission, so a
 * redirect chain from the login page's e-mail form to the IdP would be blocked; a navigation
 * started by the page is not a form submission.
 */
import { html, type SafeHtml } from './html.js'
import { CORE_STYLESHEET_PATH } from './stylesheet.js'

export interface ContinuePageModel {
  /** A local URL (path and query). */
  readonly url: string
  readonly applicationName: string
}

/**
 * A page that navigates on to `url` at once: a meta refresh (a new navigation, not a redirect after
 * a form, so CSP form-action 'self' does not stop it), and a link for a browser without it. No
 * script. With `brand`, the application's name heads the page.
 */
export function navigatingPage (page: {
  readonly url: string
  readonly applicationName: string
  readonly title: string
  readonly heading: string
  /** The paragraph, already HTML (`html`...`), so its literal text is written as is. */
  readonly text: SafeHtml
  readonly linkId: string
  readonly brand: boolean
}): string {
  const brand = page.brand ? html`<header><a class="brand" href="/">${page.applicationName}</a></header>\n` : ''
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0;url=${page.url}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${page.title} - ${page.applicationName}</title>
<link rel="stylesheet" href="${CORE_STYLESHEET_PATH}">
<link rel="stylesheet" href="/css/site.css">
</head>
<body>
${brand}<main>
<div class="card card-narrow">
<h1>${page.heading}</h1>
<p>${page.text}</p>
<p class="actions continue"><a id="${page.linkId}" href="${page.url}">Continue</a></p>
</div>
</main>
</body>
</html>
`.value
}

export function continueSignInPage (model: ContinuePageModel): string {
  return navigatingPage({ ...model, title: 'Signing in', heading: 'Signing in', text: html`Continuing to your organisation's sign-in page…`, linkId: 'continue-sign-in', brand: false })
}
