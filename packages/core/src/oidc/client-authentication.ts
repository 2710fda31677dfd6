/**
 * How the client authenticates at the token endpoint with its secret (`TokenEndpointAuthMethod`,
 * RFC 6749 section 2.3.1; OpenID Connect Core 1.0, section 9), chosen once per discovery.
 *
 * The trap this module exists for: openid-client form-encodes the client id and secret before
 * putting them in `Authorization: Basic` (RFC 6749 section 2.3.1), and providers that do not
 * form-decode them (LemonLDAP::NG 2.16, Glewlwyd 2.7.5) then refuse a secret holding `-`, `+`,
 * `/`, `=`, `.`, `~` or any other character the encoding changes. ASP.NET's OpenID Connect handler
 * sends the credentials in the form body by default. So, with `TokenEndpointAuthMethod` unset:
 * - discovery lists only `client_secret_post`: `client_secret_post`;
 * - the id or secret would change under form-encoding and discovery lists `client_secret_post`:
 *   `client_secret_post`, said once at startup (`oidc.client_authentication.post_chosen`);
 * - otherwise `client_secret_basic` (RFC 8414 section 2: an absent list means Basic only).
 * A refusal of Basic credentials that form-encoding changed names the setting in its log line.
 */
import type * as client from 'openid-client'

export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post'

/** Why a method was used: `configured` (set), `discovery` (the provider lists only post), `form_encoding` (post chosen because Basic would alter the credentials), `default` (Basic). */
export type ClientAuthenticationReason = 'configured' | 'discovery' | 'form_encoding' | 'default'

export interface ClientAuthenticationChoice {
  readonly method: TokenEndpointAuthMethod
  readonly reason: ClientAuthenticationReason
  /** Whether `application/x-www-form-urlencoded` encoding changes the client id or the secret. */
  readonly basicCredentialsAltered: boolean
}

/**
 * The encoding openid-client (oauth4webapi's `formUrlEncode`) applies to each Basic credential:
 * `encodeURIComponent`, then `-_.!~*'()` percent-encoded and `%20` as `+`.
 */
export function formUrlEncode (value: string): string {
  return encodeURIComponent(value)
    .replace(/[-_.!~*'()]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+')
}

/** Whether form-encoding changes the value: a provider that does not decode Basic credentials then refuses it. */
export function changedByFormEncoding (value: string): boolean {
  return formUrlEncode(value) !== value
}

/**
 * The method for `configured` against the provider's `token_endpoint_auth_methods_supported`,
 * given whether form-encoding would change the Basic credentials.
 */
export function chooseClientAuthentication (configured: '' | TokenEndpointAuthMethod | undefined, supported: unknown, credentials: { readonly clientId: string, readonly clientSecret: string }): ClientAuthenticationChoice {
  const basicCredentialsAltered = changedByFormEncoding(credentials.clientId) || changedByFormEncoding(credentials.clientSecret)
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

/** The startup log line when client_secret_post was chosen because Basic would alter the credentials; undefined otherwise. */
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
 * the token endpoint refused Basic credentials that form-encoding changed: the likely cause, and
 * the one setting that fixes it. Never the id or the secret.
 */
export function withClientAuthenticationHint<T extends { readonly httpStatus?: number, readonly oauthError?: string }> (config: client.Configuration, diagnostics: T): T | (T & { readonly setting: string, readonly hint: string }) {
  const choice = choices.get(config)
  if (choice === undefined || choice.method !== 'client_secret_basic' || !choice.basicCredentialsAltered || !refusesClient(diagnostics)) return diagnostics
  return { ...diagnostics, setting: choice.setting, hint: 'basic_credentials_form_encoded' }
}

/**
 * What check-config says (it does not fetch discovery): with `TokenEndpointAuthMethod` unset and a
 * client id or secret that form-encoding changes, client_secret_post will be used when the
 * provider's discovery lists it. Empty otherwise.
 */
export function clientAuthenticationWarnings (settings: { readonly Enabled: boolean, readonly ClientId: string, readonly ClientSecret: { reveal: () => string }, readonly TokenEndpointAuthMethod: string }, setting: string): Array<{ event: string, key: string, message: string }> {
  if (!settings.Enabled || settings.TokenEndpointAuthMethod !== '') return []
  if (!changedByFormEncoding(settings.ClientId) && !changedByFormEncoding(settings.ClientSecret.reveal())) return []
  return [{
    event: 'oidc.client_authentication.post_chosen',
    key: setting,
    message: `${setting} is unset and form-encoding changes the client id or secret (RFC 6749 section 2.3.1): client_secret_post will be used when the provider's discovery lists it, so that providers which do not decode Basic credentials accept them; set ${setting} to choose.`
  }]
}
