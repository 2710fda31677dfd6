/**
 * How the client authenticates at the token endpoint with its secret (`TokenEndpointAuthMethod`,
 * RFC 6749 section 2.3.1; OpenID Connect Core 1.0, section 9), chosen once per discovery.
 *
 * The trap this module exists for: RFC 6749 section 2.3.1 has the client id and secret encoded
 * before they go in `Authorization: Basic`, and providers that do not decode them (LemonLDAP::NG
 * 2.16, Glewlwyd 2.7.5) then refuse any id or secret the encoding changed. Basic credentials are
 * encoded as ASP.NET encodes them (http/basic-credentials.ts): the RFC 3986 unreserved characters
 * `A-Z a-z 0-9 - . _ ~` stay as they are, so ordinary ids (`project-template-web`) and secrets go
 * unchanged; `+ / = ! * ' ( )`, space, `%`, `:` and non-ASCII characters still change. So, with
 * `TokenEndpointAuthMethod` unset:
 * - discovery lists only `client_secret_post`: `client_secret_post`;
 * - the id or secret holds a character the encoding changes and discovery lists
 *   `client_secret_post`: `client_secret_post`, said once at startup
 *   (`oidc.client_authentication.post_chosen`) and by check-config, naming the characters;
 * - otherwise `client_secret_basic` (RFC 8414 section 2: an absent list means Basic only).
 * A refusal of Basic credentials that the encoding changed names the setting in its log line.
 */
import type * as client from 'openid-client'
import { charactersChangedByBasicEncoding } from '../http/basic-credentials.js'

export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post'

/** Why a method was used: `configured` (set), `discovery` (the provider lists only post), `form_encoding` (post chosen because the Basic encoding would alter the credentials), `default` (Basic). */
export type ClientAuthenticationReason = 'configured' | 'discovery' | 'form_encoding' | 'default'

export interface ClientAuthenticationChoice {
  readonly method: TokenEndpointAuthMethod
  readonly reason: ClientAuthenticationReason
  /** Whether the Basic credentials encoding (http/basic-credentials.ts) changes the client id or the secret. */
  readonly basicCredentialsAltered: boolean
}

/** Whether the Basic credentials encoding changes the value: a provider that does not decode Basic credentials then refuses it. */
export function changedByBasicEncoding (value: string): boolean {
  return charactersChangedByBasicEncoding(value).length > 0
}

/**
 * The method for `configured` against the provider's `token_endpoint_auth_methods_supported`,
 * given whether the Basic credentials encoding would change the client id or secret.
 */
export function chooseClientAuthentication (configured: '' | TokenEndpointAuthMethod | undefined, supported: unknown, credentials: { readonly clientId: string, readonly clientSecret: string }): ClientAuthenticationChoice {
  const basicCredentialsAltered = changedByBasicEncoding(credentials.clientId) || changedByBasicEncoding(credentials.clientSecret)
  if (configured === 'client_secret_basic' || configured === 'client_secret_post') return { method: configured, reason: 'configured', basicCredentialsAltered }
  // RFC 8414 section 2: an absent list means client_secret_basic.
  const methods = Array.isArray(supported) ? supported : []
  if (!methods.includes('client_secret_post')) return { method: 'client_secret_basic', reason: 'default', basicCredentialsAltered }
  if (!methods.includes('client_secret_basic')) return { method: 'client_secret_post', reason: 'discovery', basicCredentialsAltered }
  return basicCredentialsAltered
    ? { method: 'client_secret_post', reason: 'form_encoding', basicCredentialsAltered }
    : { method: 'client_secret_basic', reason: 'default', basicCredentialsAltered }
}

/** The choice made for each discovered configuration, and the colon path of the setting to name. */
const choices = new WeakMap<client.Configuration, ClientAuthenticationChoice & { readonly setting: string }>()

/** Remembers the choice made for `config` (called once per discovery). */
export function rememberClientAuthentication (config: client.Configuration, choice: ClientAuthenticationChoice, setting: string): void {
  choices.set(config, { ...choice, setting })
}

/** The choice made for `config`, if any. */
export function clientAuthenticationOf (config: client.Configuration): (ClientAuthenticationChoice & { readonly setting: string }) | undefined {
  return choices.get(config)
}

/** The startup log line when client_secret_post was chosen because the Basic encoding would alter the credentials; undefined otherwise. */
export function postChosenNotice (config: client.Configuration): { readonly event: string, readonly method: TokenEndpointAuthMethod, readonly reason: ClientAuthenticationReason, readonly setting: string } | undefined {
  const choice = choices.get(config)
  if (choice?.reason !== 'form_encoding') return undefined
  return { event: 'oidc.client_authentication.post_chosen', method: choice.method, reason: choice.reason, setting: choice.setting }
}

/** Token endpoint answers that refuse the client's authentication (Glewlwyd answers 403 unauthorized_client). */
function refusesClient (diagnostics: { readonly httpStatus?: number, readonly oauthError?: string }): boolean {
  return diagnostics.oauthError === 'invalid_client' || diagnostics.oauthError === 'unauthorized_client' ||
    diagnostics.httpStatus === 401 || diagnostics.httpStatus === 403
}

/**
 * `diagnostics` with `setting` (the colon path of TokenEndpointAuthMethod) and `hint` added when
 * the token endpoint refused Basic credentials that the encoding changed: the likely cause, and
 * the one setting that fixes it. Never the id or the secret. The hint keeps its documented value
 * `basic_credentials_form_encoded`.
 */
export function withClientAuthenticationHint<T extends { readonly httpStatus?: number, readonly oauthError?: string }> (config: client.Configuration, diagnostics: T): T | (T & { readonly setting: string, readonly hint: string }) {
  const choice = choices.get(config)
  if (choice === undefined || choice.method !== 'client_secret_basic' || !choice.basicCredentialsAltered || !refusesClient(diagnostics)) return diagnostics
  return { ...diagnostics, setting: choice.setting, hint: 'basic_credentials_form_encoded' }
}

/** `characters` as the warning names them: each in backticks, a space as "space". */
function listCharacters (characters: readonly string[]): string {
  return characters.map((character) => character === ' ' ? 'space' : `\`${character}\``).join(', ')
}

/**
 * What check-config says (it does not fetch discovery): with `TokenEndpointAuthMethod` unset and a
 * client id or secret holding characters the Basic encoding changes, client_secret_post will be
 * used when the provider's discovery lists it. The warning names those characters (which of the
 * id's, which of the secret's), never the id or the secret. Empty otherwise.
 */
export function clientAuthenticationWarnings (settings: { readonly Enabled: boolean, readonly ClientId: string, readonly ClientSecret: { reveal: () => string }, readonly TokenEndpointAuthMethod: string }, setting: string): Array<{ event: string, key: string, message: string }> {
  if (!settings.Enabled || settings.TokenEndpointAuthMethod !== '') return []
  const changed = [
    { part: 'client id', characters: charactersChangedByBasicEncoding(settings.ClientId) },
    { part: 'client secret', characters: charactersChangedByBasicEncoding(settings.ClientSecret.reveal()) }
  ].filter(({ characters }) => characters.length > 0)
  if (changed.length === 0) return []
  const holds = changed.map(({ part, characters }) => `the ${part} holds ${listCharacters(characters)}`).join(' and ')
  return [{
    event: 'oidc.client_authentication.post_chosen',
    key: setting,
    message: `${setting} is unset and ${holds}, which Basic credentials carry percent-encoded (only A-Z a-z 0-9 - . _ ~ go unchanged; RFC 6749 section 2.3.1): client_secret_post will be used when the provider's discovery lists it, so that providers which do not decode Basic credentials accept them; set ${setting} to choose.`
  }]
}
