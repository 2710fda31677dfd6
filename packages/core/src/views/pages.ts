/**
 * The core's pages: login, access denied, the terminal error page and the provider sign-out
 * hand-over. Plain functions from data to HTML; no request objects. Inline scripts and styles are
 * absent so the strict Content-Security-Policy holds: the look comes from the core's stylesheet
 * ({@link CORE_STYLESHEET_PATH}, views/stylesheet.ts), then the app's `/css/site.css`, which
 * brands it through CSS custom properties. Each page is a card: the login page a narrow centred
 * one (provider buttons, the e-mail field), the others wider. An app brands them ({@link Branding}: the
 * application name in titles and header, or its own layout) through `createApp({ branding })`,
 * which builds one {@link Pages} set and decorates the app with it (`app.pages`).
 */
import { APPLICATION_NAME } from '../application-name.js'
import { navigatingPage } from './continue-page.js'
import { html, type SafeHtml } from './html.js'
import { CORE_STYLESHEET_PATH } from './stylesheet.js'

/** The application name pages show by default (titles, header). */
export const APPLICATION_TITLE = APPLICATION_NAME

/** @public */
export interface LayoutOptions {
  /** The page's own title; the layout adds the application name. */
  readonly title: string
  /** The signed-in user's display name, when someone is signed in. */
  readonly userName?: string | undefined
}

/** What a layout receives besides the page body: the page's title, user, and the application name. @public */
export interface BrandedLayoutOptions extends LayoutOptions {
  readonly applicationName: string
}

/**
 * An app's page layout: the whole HTML document around `body`. `body` and anything built with
 * {@link html} is escaped already; interpolate other values through `html` too. No inline script
 * or style (the Content-Security-Policy forbids them).
 *
 * @public
 */
export type PageLayout = (options: BrandedLayoutOptions, body: SafeHtml) => string

/** Page branding an app supplies to `createApp`; every member is optional. @public */
export interface Branding {
  /** Shown in every page title (`<title>Sign in - <name></title>`) and the header. Default `ProjectTemplate`. */
  readonly applicationName?: string
  /**
   * Replaces the default layout ({@link defaultLayout}) of every page built on it. Link the core's
   * stylesheet (`/_core/site.css`) in it to keep the pages' look. Colours are branded without a
   * layout: set the stylesheet's custom properties (`--pt-accent`...) in the app's `/css/site.css`.
   */
  readonly layout?: PageLayout
}

/** The default layout: header with the application name (and the user), the page in `<main>`. @public */
export function defaultLayout (options: BrandedLayoutOptions, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${options.title} - ${options.applicationName}</title>
<link rel="stylesheet" href="${CORE_STYLESHEET_PATH}">
<link rel="stylesheet" href="/css/site.css">
<link rel="icon" href="/favicon.ico">
</head>
<body>
<header><a class="brand" href="/">${options.applicationName}</a>${options.userName === undefined ? '' : html`<span class="user">Signed in as ${options.userName}</span>`}</header>
<main>
${body}
</main>
</body>
</html>
`.value
}

/** @public */
export interface LoginProvider {
  readonly scheme: string
  readonly displayName: string
  readonly available: boolean
}

/** @public */
export interface LoginPageModel {
  readonly providers: readonly LoginProvider[]
  readonly returnUrl?: string | undefined
  /** A fixed, safe message after a failed sign-in flow. */
  readonly failureMessage?: string | undefined
  /** Offer the e-mail field of discovery by domain (some provider declares Domains). */
  readonly emailDiscovery?: boolean | undefined
  /** The address the user entered, shown again in the e-mail field after a failure (escaped). */
  readonly email?: string | undefined
}

/** The form that starts a sign-in at the provider serving the address's domain (GET /External/Challenge?email=). */
function emailDiscoveryForm (model: LoginPageModel): SafeHtml | string {
  if (model.emailDiscovery !== true) return ''
  const returnUrl = model.returnUrl === undefined ? '' : html`<input type="hidden" name="returnUrl" value="${model.returnUrl}">`
  const value = model.email === undefined ? '' : html` value="${model.email}"`
  return html`<form class="email-discovery" method="get" action="/External/Challenge">
<label for="email">Work e-mail address</label>
<input id="email" type="email" name="email" autocomplete="email" required maxlength="254"${value}>${returnUrl}
<button type="submit">Continue</button>
</form>`
}

export const NO_PROVIDER_STATEMENT = 'No sign-in provider is configured for this application.'

function loginPage (layout: (options: LayoutOptions, body: SafeHtml) => string, model: LoginPageModel): string {
  const failure = model.failureMessage === undefined ? '' : html`<p class="alert" role="alert">${model.failureMessage}</p>`
  if (model.providers.length === 0) {
    return layout({ title: 'Sign in' }, html`<div class="card card-narrow sign-in"><h1>Sign in</h1>
${failure}
<p id="no-provider">${NO_PROVIDER_STATEMENT}</p>
</div>`)
  }
  const items = model.providers.map((provider) => {
    const query = new URLSearchParams({ provider: provider.scheme })
    if (model.returnUrl !== undefined) query.set('returnUrl', model.returnUrl)
    return provider.available
      ? html`<li><a class="provider" data-provider="${provider.scheme}" href="/External/Challenge?${query.toString()}">${provider.displayName}</a></li>`
      : html`<li><span class="provider unavailable" data-provider="${provider.scheme}">${provider.displayName} (unavailable)</span></li>`
  })
  const discovery = emailDiscoveryForm(model)
  return layout({ title: 'Sign in' }, html`<div class="card card-narrow sign-in"><h1>Sign in</h1>
${failure}
${discovery}
${discovery === '' ? html`<p>Choose how to sign in:</p>` : html`<p class="divider">or choose how to sign in</p>`}
<ul class="providers">${items}</ul>
</div>`)
}

function accessDeniedPage (layout: (options: LayoutOptions, body: SafeHtml) => string, userName: string | undefined, reason?: string, requestId?: string): string {
  return layout({ title: 'Access denied', userName }, html`<div class="card card-page"><h1>Access denied</h1>
${reason === undefined ? html`<p>You do not have permission to view this resource.</p>` : html`<p id="access-denied-reason">${reason}</p>`}
${requestId === undefined ? '' : html`<p class="muted">Request id: <code id="request-id">${requestId}</code></p>`}
<p class="actions"><a class="button" href="/">Return to the start page</a></p>
</div>`)
}

/** @public */
export interface ErrorPageModel {
  readonly statusCode: number
  readonly title: string
  readonly requestId: string
  /** Development only: the exception detail. */
  readonly detail?: string | undefined
}

function errorPage (layout: (options: LayoutOptions, body: SafeHtml) => string, model: ErrorPageModel): string {
  return layout({ title: model.title }, html`<div class="card card-page"><h1>${model.statusCode} ${model.title}</h1>
<p>The request could not be completed.</p>
${model.detail === undefined ? '' : html`<pre class="detail">${model.detail}</pre>`}
<p class="muted">Request id: <code id="request-id">${model.requestId}</code></p>
<p class="actions"><a class="button" href="/">Return to the start page</a></p>
</div>`)
}

/**
 * After the local sign-out, on the way to the provider's logout endpoint (OIDC end_session,
 * SAML2 SingleLogoutService). A page, not a redirect: the logout form's POST may only lead to
 * this origin (CSP form-action 'self', which Chromium applies to redirects too); a meta refresh
 * is a new navigation. No script.
 */
function providerSignOutPage (applicationName: string, model: ProviderSignOutPageModel): string {
  return navigatingPage({
    url: model.url,
    applicationName,
    title: 'Signing out',
    heading: 'Signed out',
    text: html`You are signed out of this application. Continuing to sign out at ${model.displayName}…`,
    linkId: 'continue-sign-out',
    brand: true
  })
}

/** @public */
export interface ProviderSignOutPageModel {
  /** The provider's logout URL (OIDC end_session, SAML2 SingleLogoutService). */
  readonly url: string
  readonly displayName: string
}

/** The core's pages, branded once: `app.pages` (and what an app's own pages build on: `layout`). @public */
export interface Pages {
  readonly applicationName: string
  /** The branded layout with the application name filled in. */
  readonly layout: (options: LayoutOptions, body: SafeHtml) => string
  readonly loginPage: (model: LoginPageModel) => string
  /**
   * `reason`: the application's own words (a sign-in hook's refusal) or a refused sign-in's fixed
   * text, escaped; default a fixed text. `requestId`: the request's id, shown for the administrator
   * (a refused sign-in: the `reqId` of its log lines). The `requestId` parameter is `@experimental`.
   */
  readonly accessDeniedPage: (userName: string | undefined, reason?: string, requestId?: string) => string
  readonly errorPage: (model: ErrorPageModel) => string
  readonly providerSignOutPage: (model: ProviderSignOutPageModel) => string
}

/** Rendered pages kept per model, at most this many (when full the cache starts over). */
const RENDERED_PAGES = 64
/** Models whose JSON is longer than this (a long return URL) are rendered every time. */
const RENDERED_MODEL_CHARACTERS = 1024

/**
 * `render`, remembering its page per model: the login page is the same for the same providers,
 * availability, return URL and message, and the model's JSON (every field, so a field added to
 * the model later is part of the key) is cheaper than rendering the layout again.
 */
function renderedOnce<Model> (render: (model: Model) => string): (model: Model) => string {
  const pages = new Map<string, string>()
  return (model: Model): string => {
    const key = JSON.stringify(model)
    if (key.length > RENDERED_MODEL_CHARACTERS) return render(model)
    let page = pages.get(key)
    if (page === undefined) {
      page = render(model)
      if (pages.size >= RENDERED_PAGES) pages.clear()
      pages.set(key, page)
    }
    return page
  }
}

/**
 * {@link renderedOnce}, except for a page that shows back what the user typed (an e-mail address):
 * rendered every time, so no address is kept in memory after its answer.
 */
function rememberedUnlessTyped (render: (model: LoginPageModel) => string): (model: LoginPageModel) => string {
  const remembered = renderedOnce(render)
  return (model: LoginPageModel): string => model.email === undefined ? remembered(model) : render(model)
}

/** Builds the page set for `branding` (defaults: the application name {@link APPLICATION_TITLE}, {@link defaultLayout}). @public */
export function createPages (branding: Branding = {}): Pages {
  const applicationName = branding.applicationName ?? APPLICATION_TITLE
  const brandedLayout = branding.layout ?? defaultLayout
  const layout = (options: LayoutOptions, body: SafeHtml): string => brandedLayout({ ...options, applicationName }, body)
  return Object.freeze({
    applicationName,
    layout,
    // An app's own layout may show something that changes (a year, a build): rendered every time.
    loginPage: branding.layout === undefined ? rememberedUnlessTyped((model: LoginPageModel) => loginPage(layout, model)) : (model: LoginPageModel) => loginPage(layout, model),
    accessDeniedPage: (userName: string | undefined, reason?: string, requestId?: string) => accessDeniedPage(layout, userName, reason, requestId),
    errorPage: (model: ErrorPageModel) => errorPage(layout, model),
    providerSignOutPage: (model: ProviderSignOutPageModel) => providerSignOutPage(applicationName, model)
  })
}

/** The pages with the default branding (for code that runs outside an app, and tests). */
export const DEFAULT_PAGES: Pages = createPages()
