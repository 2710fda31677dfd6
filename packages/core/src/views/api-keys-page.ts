/**
 * The API key pages (`/Account/ApiKeys`, issue 42, item 6): the signed-in user's keys (and their
 * tenant's, for its administrator) with name, prefix and last characters, scopes, created, last
 * used and expiry, a revoke form per active key, and the creation form (name, the scheme's scopes
 * as checkboxes with their descriptions, lifetime, owner); and the page that shows a new key once.
 * Plain data to HTML on the app's branded layout; no script. A refused field is named in an alert
 * that links to it, and the field is marked invalid and described by the alert.
 */
import { html, type SafeHtml } from './html.js'
import type { LayoutOptions } from './pages.js'
import { timeElement, timeText } from './time.js'

/** What the form sent, kept to show it again after a refusal (never a key: a new key is never sent back). */
export interface CreateFormValues {
  readonly name: string
  readonly scopes: readonly string[]
  readonly lifetimeDays: string
  readonly owner: string
}
/** Where the pages live. */
export const API_KEYS_PATH = '/Account/ApiKeys'

export interface ApiKeyRow {
  readonly id: string
  readonly name: string
  readonly prefix: string
  readonly lastFour: string
  readonly scopes: readonly string[]
  /** Seconds since the epoch. */
  readonly created: number
  readonly lastUsed?: number | undefined
  readonly expires: number
  readonly state: 'active' | 'expired' | 'revoked'
}

/** One owner's keys: the user's own, or the tenant's. */
export interface ApiKeyList {
  readonly owner: 'user' | 'tenant'
  readonly heading: string
  readonly keys: readonly ApiKeyRow[]
}

/** A refusal shown above the form; `field` is the form field it names (none: the request as a whole). */
export interface ApiKeyFormProblem {
  readonly field?: 'name' | 'scopes' | 'lifetimeDays' | 'owner' | undefined
  readonly message: string
}

export interface ApiKeyCreateForm {
  /** The scheme's scopes with their descriptions. */
  readonly scopes: Readonly<Record<string, string>>
  readonly defaultLifetimeDays: number
  readonly maxLifetimeDays: number
  /** The owners the caller may create a key for (empty: none). */
  readonly owners: ReadonlyArray<'user' | 'tenant'>
  /** Whether the sign-in is recent enough to create a key; else the form is a link to sign in again. */
  readonly recentSignIn: boolean
  readonly maxAgeSeconds: number
  /** Where a sign-in again starts (the creation policy's step-up). */
  readonly confirmUrl: string
  readonly values?: CreateFormValues | undefined
  readonly problem?: ApiKeyFormProblem | undefined
}

export interface ApiKeysPageModel {
  readonly userName: string | undefined
  readonly csrfToken: string
  /** Every enabled ApiKey scheme (a choice is shown when there are several). */
  readonly schemes: ReadonlyArray<{ readonly scheme: string, readonly displayName: string }>
  readonly scheme: string
  readonly lists: readonly ApiKeyList[]
  readonly form: ApiKeyCreateForm
}

const FIELD_IDS = { name: 'key-name', scopes: 'key-scopes', lifetimeDays: 'key-lifetime', owner: 'key-owner' } as const

const schemeQuery = (scheme: string): string => `?${new URLSearchParams({ scheme }).toString()}`

/** `acme_…Zx9Q`: what identifies a key on the list (the prefix and its last four characters). */
export const keyHint = (row: Pick<ApiKeyRow, 'prefix' | 'lastFour'>): string => `${row.prefix}…${row.lastFour}`

function hiddenFields (model: Pick<ApiKeysPageModel, 'csrfToken' | 'scheme'>): SafeHtml {
  return html`<input type="hidden" name="__RequestVerificationToken" value="${model.csrfToken}"><input type="hidden" name="scheme" value="${model.scheme}">`
}

function schemeChoice (model: ApiKeysPageModel): SafeHtml | string {
  if (model.schemes.length < 2) return ''
  const items = model.schemes.map((entry) => entry.scheme === model.scheme
    ? html`<li><a href="${API_KEYS_PATH}${schemeQuery(entry.scheme)}" aria-current="page">${entry.displayName}</a></li>`
    : html`<li><a href="${API_KEYS_PATH}${schemeQuery(entry.scheme)}">${entry.displayName}</a></li>`)
  return html`<nav class="key-schemes" aria-label="Kinds of API key"><ul>${items}</ul></nav>`
}

const STATES = { active: 'Active', expired: 'Expired', revoked: 'Revoked' } as const

function keyRow (model: ApiKeysPageModel, row: ApiKeyRow): SafeHtml {
  const action = row.state === 'active'
    ? html`<form method="post" action="${API_KEYS_PATH}/Revoke">${hiddenFields(model)}<input type="hidden" name="keyId" value="${row.id}"><button type="submit" class="danger revoke-key" aria-label="Revoke ${row.name} (${keyHint(row)}), expires ${timeText(row.expires)}">Revoke</button></form>`
    : ''
  return html`<tr data-key="${row.id}">
<td>${row.name}</td><td><code>${keyHint(row)}</code></td><td>${row.scopes.map((scope, index) => html`${index === 0 ? '' : ', '}<code>${scope}</code>`)}</td>
<td>${timeElement(row.created)}</td><td>${row.lastUsed === undefined ? 'Never' : timeElement(row.lastUsed)}</td><td>${timeElement(row.expires)}</td>
<td>${STATES[row.state]}</td><td>${action}</td>
</tr>`
}

function keyList (model: ApiKeysPageModel, list: ApiKeyList): SafeHtml {
  const id = `keys-${list.owner}`
  if (list.keys.length === 0) return html`<h2 id="${id}">${list.heading}</h2><p class="muted">No API keys yet.</p>`
  return html`<h2 id="${id}">${list.heading}</h2>
<div class="table-scroll" role="region" aria-labelledby="${id}" tabindex="0">
<table class="api-keys"><thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>${list.keys.map((row) => keyRow(model, row))}</tbody></table>
</div>`
}

/** The attributes of a field the problem names: invalid, and described by the alert. */
function invalidIf (form: ApiKeyCreateForm, field: keyof typeof FIELD_IDS): SafeHtml | string {
  return form.problem?.field === field ? html` aria-invalid="true" aria-describedby="form-problem"` : ''
}

function scopeChoices (form: ApiKeyCreateForm): SafeHtml {
  const chosen = new Set(form.values?.scopes ?? [])
  const boxes = Object.entries(form.scopes).map(([scope, description], index) => html`<div class="choice">
<input type="checkbox" id="scope-${index}" name="scopes" value="${scope}"${chosen.has(scope) ? html` checked` : ''}>
<label for="scope-${index}"><code>${scope}</code> <span class="muted">${description}</span></label>
</div>`)
  const problem = form.problem?.field === 'scopes' ? html` aria-describedby="form-problem"` : ''
  return html`<fieldset id="${FIELD_IDS.scopes}"${problem}><legend>Scopes</legend>
<p class="hint">Choose at least one. A key for yourself can only have scopes you have.</p>
${boxes}</fieldset>`
}

function ownerChoices (form: ApiKeyCreateForm): SafeHtml | string {
  if (form.owners.length < 2) return form.owners.length === 1 ? html`<input type="hidden" name="owner" value="${form.owners[0]}">` : ''
  const chosen = form.values?.owner === 'tenant' ? 'tenant' : 'user'
  const option = (owner: 'user' | 'tenant', label: string): SafeHtml => html`<div class="choice">
<input type="radio" id="owner-${owner}" name="owner" value="${owner}"${owner === chosen ? html` checked` : ''}>
<label for="owner-${owner}">${label}</label>
</div>`
  const problem = form.problem?.field === 'owner' ? html` aria-describedby="form-problem"` : ''
  return html`<fieldset id="${FIELD_IDS.owner}"${problem}><legend>Owner</legend>
${option('user', 'You: the key acts as you, and is revoked when you leave')}
${option('tenant', 'Your organisation: the key outlives you, and other administrators can revoke it')}
</fieldset>`
}

function createForm (model: ApiKeysPageModel): SafeHtml {
  const form = model.form
  const minutes = Math.max(1, Math.round(form.maxAgeSeconds / 60))
  if (form.owners.length === 0) return html`<h2 id="create-heading">Create a key</h2><p>You cannot create keys of this kind.</p>`
  if (!form.recentSignIn) {
    return html`<h2 id="create-heading">Create a key</h2>
<p id="sign-in-again-reason">Creating a key needs a sign-in in the last ${minutes === 1 ? 'minute' : `${minutes} minutes`}.</p>
<p><a class="button" id="sign-in-again" href="${form.confirmUrl}" aria-describedby="sign-in-again-reason">Sign in again to create a key</a></p>`
  }
  const values = form.values
  return html`<h2 id="create-heading">Create a key</h2>
<form class="create-key" method="post" action="${API_KEYS_PATH}/Create" aria-labelledby="create-heading">${hiddenFields(model)}
<div class="field"><label for="${FIELD_IDS.name}">Name</label>
<input type="text" id="${FIELD_IDS.name}" name="name" required maxlength="100" autocomplete="off" value="${values?.name ?? ''}"${invalidIf(form, 'name')}>
<p class="hint">What the key is for, such as the script or service that uses it.</p></div>
${scopeChoices(form)}
<div class="field"><label for="${FIELD_IDS.lifetimeDays}">Lifetime in days</label>
<input type="number" id="${FIELD_IDS.lifetimeDays}" name="lifetimeDays" required min="1" max="${form.maxLifetimeDays}" step="1" inputmode="numeric" value="${values?.lifetimeDays ?? String(form.defaultLifetimeDays)}" aria-describedby="lifetime-hint"${invalidIf(form, 'lifetimeDays')}>
<p class="hint" id="lifetime-hint">1 to ${form.maxLifetimeDays}. The key stops working after that; create a new one before it does.</p></div>
${ownerChoices(form)}
<div class="actions"><button type="submit" id="create-key">Create key</button></div>
</form>`
}

function problemAlert (problem: ApiKeyFormProblem | undefined): SafeHtml | string {
  if (problem === undefined) return ''
  const link = problem.field === undefined ? '' : html` <a href="#${FIELD_IDS[problem.field]}">Go to the field</a>`
  return html`<div class="alert" role="alert" id="form-problem"><p>${problem.message}${link}</p></div>`
}

export function apiKeysPage (layout: (options: LayoutOptions, body: SafeHtml) => string, model: ApiKeysPageModel): string {
  return layout({ title: 'API keys', userName: model.userName }, html`<h1>API keys</h1>
<p>API keys let your scripts and integrations call this application's API. Each key is shown once, when it is created.</p>
${schemeChoice(model)}
${problemAlert(model.form.problem)}
${model.lists.map((list) => keyList(model, list))}
${createForm(model)}
<div class="actions"><a href="/">Return to the start page</a></div>`)
}

export interface CreatedKeyPageModel {
  readonly userName: string | undefined
  readonly scheme: string
  readonly name: string
  /** The key itself: on this page only, never again. */
  readonly secret: string
  readonly scopes: readonly string[]
  /** Seconds since the epoch. */
  readonly expires: number
}

/** The new key, shown once (the answer is sent with `Cache-Control: no-store`). */
export function createdKeyPage (layout: (options: LayoutOptions, body: SafeHtml) => string, model: CreatedKeyPageModel): string {
  return layout({ title: 'Your new API key', userName: model.userName }, html`<div class="card card-page"><h1>Your new API key</h1>
<p id="copy-now"><strong>Copy the key now.</strong> It is not shown again: if you lose it, revoke it and create another.</p>
<div class="field"><label for="new-key">API key “${model.name}”</label>
<input type="text" id="new-key" class="secret" readonly autocomplete="off" spellcheck="false" value="${model.secret}" aria-describedby="copy-now"></div>
<p>Scopes: ${model.scopes.map((scope, index) => html`${index === 0 ? '' : ', '}<code>${scope}</code>`)}. Expires ${timeElement(model.expires)}.</p>
<p>Send it as <code>Authorization: Bearer</code> followed by the key; never in a URL.</p>
<p class="actions"><a class="button" id="back-to-keys" href="${API_KEYS_PATH}${schemeQuery(model.scheme)}">Back to your API keys</a></p>
</div>`)
}
