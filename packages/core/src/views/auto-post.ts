/**
 * A page whose form the browser POSTs at once to another site (the SAML HTTP-POST binding: this
 * SP's LogoutResponse to the IdP's SingleLogoutService). The app's Content-Security-Policy allows
 * no inline script and form-action 'self', so the page comes with its own policy
 * ({@link autoPostContentSecurityPolicy}): the one script by its SHA-256 hash, and form-action the
 * target's origin only. Without script, the button submits the form. Styled by the core's
 * stylesheet (the policy keeps style-src 'self'), its title as the heading.
 */
import { createHash } from 'node:crypto'
import { html, SafeHtml } from './html.js'
import { CORE_STYLESHEET_PATH } from './stylesheet.js'

const SUBMIT_SCRIPT = 'document.forms[0].submit()'
const SUBMIT_SCRIPT_HASH = `'sha256-${createHash('sha256').update(SUBMIT_SCRIPT, 'utf8').digest('base64')}'`

export interface AutoPostPageModel {
  /** The absolute URL the form posts to. */
  readonly action: string
  readonly fields: Readonly<Record<string, string>>
  readonly title: string
}

export function autoPostPage (model: AutoPostPageModel): string {
  const inputs = Object.entries(model.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${model.title}</title>
<link rel="stylesheet" href="${CORE_STYLESHEET_PATH}">
</head>
<body>
<main>
<div class="card card-narrow">
<h1>${model.title}</h1>
<form method="post" action="${model.action}">
${inputs}
<noscript><button type="submit">Continue</button></noscript>
</form>
</div>
</main>
<script>${new SafeHtml(SUBMIT_SCRIPT)}</script>
</body>
</html>
`.value
}

/**
 * The app's policy with script-src narrowed to the page's one script and form-action set to the
 * origin of `action` (every other directive as the app sends it).
 */
export function autoPostContentSecurityPolicy (appPolicy: string, action: string): string {
  const origin = new URL(action).origin
  const directives = appPolicy.split(';').map((directive) => directive.trim()).filter((directive) => directive !== '')
    .filter((directive) => !/^(script-src|form-action)(\s|$)/i.test(directive))
  return [...directives, `script-src ${SUBMIT_SCRIPT_HASH}`, `form-action ${origin}`].join(';')
}
