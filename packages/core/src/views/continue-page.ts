/**
 * A no-store page that navigates on to a local URL (meta refresh, and a link without it). E-mail
 * discovery answers a browser's form submission with it: the app's Content-Security-Policy has
 * form-action 'self', which Chromium applies to every redirect after a form submission, so a
 * redirect chain from the login page's e-mail form to the IdP would be blocked; a navigation
 * started by the page is not a form submission.
 */
import { html } from './html.js'

export interface ContinuePageModel {
  /** A local URL (path and query). */
  readonly url: string
  readonly applicationName: string
}

export function continueSignInPage (model: ContinuePageModel): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0;url=${model.url}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Signing in - ${model.applicationName}</title>
<link rel="stylesheet" href="/css/site.css">
</head>
<body>
<main>
<h1>Signing in</h1>
<p>Continuing to your organisation's sign-in page…</p>
<p><a id="continue-sign-in" href="${model.url}">Continue</a></p>
</main>
</body>
</html>
`.value
}
