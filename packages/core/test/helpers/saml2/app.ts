/**
 * The app under test with the Saml2 provider enabled against a {@link TestIdentityProvider}, and
 * the HTTP steps of a SAML sign-in (challenge, ACS post) through inject().
 */
import assert from 'node:assert/strict'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildTestApp, cookieHeaderFrom, type TestApp, type TestAppOptions } from '../app.js'
import { readAuthnRequest, type AuthnRequestSeen, type TestIdentityProvider } from './identity-provider.js'
import { waitFor } from '../wait.js'

export const SP_ENTITY_ID = 'http://127.0.0.1/sp'
export const SESSION_COOKIE_NAMES = ['__Host-ProjectTemplate.Web.Authentication', '.ProjectTemplate.Web.Authentication']

type Saml2Overrides = Record<string, string | number | boolean | string[]>

export async function buildSaml2App (idp: TestIdentityProvider, overrides: Saml2Overrides = {}, options: Pick<TestAppOptions, 'signInHook' | 'stateStore' | 'configure'> & { authentication?: Record<string, Record<string, number | boolean>>, rateLimits?: false } = {}): Promise<TestApp> {
  return await buildTestApp({
    nodeEnv: 'development',
    testSignIn: false,
    settings: {
      ...(options.rateLimits === false ? { RateLimits: { Enabled: false } } : {}),
      Authentication: {
        ...options.authentication,
        Providers: { Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: idp.metadataUrl, ...overrides } }
      }
    },
    ...(options.signInHook === undefined ? {} : { signInHook: options.signInHook }),
    ...(options.stateStore === undefined ? {} : { stateStore: options.stateStore }),
    ...(options.configure === undefined ? {} : { configure: options.configure })
  })
}

/** Waits (bounded) until the Saml2 provider reports available. */
export async function waitForSaml2 (app: FastifyInstance, timeoutMs = 20_000): Promise<void> {
  await waitFor(() => app.authentication.providers.get('Saml2')?.status().available === true, 'the Saml2 provider to become available', timeoutMs)
}

export interface StartedFlow {
  readonly request: AuthnRequestSeen
  /** Cookie header carrying the correlation cookie. */
  readonly cookie: string
  readonly relayState: string
}

export async function startSaml2SignIn (app: FastifyInstance, returnUrl = '/'): Promise<StartedFlow> {
  const response = await app.inject({ method: 'GET', url: `/External/Challenge?provider=Saml2&returnUrl=${encodeURIComponent(returnUrl)}` })
  assert.equal(response.statusCode, 302)
  const request = readAuthnRequest(String(response.headers.location))
  assert.ok(request.relayState !== undefined)
  return { request, cookie: cookieHeaderFrom(response), relayState: request.relayState }
}

export async function postToAcs (app: FastifyInstance, fields: { SAMLResponse?: string, RelayState?: string | undefined }, cookie = ''): Promise<LightMyRequestResponse> {
  const form = new URLSearchParams()
  if (fields.SAMLResponse !== undefined) form.set('SAMLResponse', fields.SAMLResponse)
  if (fields.RelayState !== undefined) form.set('RelayState', fields.RelayState)
  return await app.inject({
    method: 'POST',
    url: '/Saml2/Acs',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === '' ? {} : { cookie }) },
    payload: form.toString()
  })
}

export function setsSessionCookie (response: LightMyRequestResponse): boolean {
  return response.cookies.some((cookie) => SESSION_COOKIE_NAMES.some((name) => cookie.name.startsWith(name)) && cookie.value !== '')
}

/** Fails when any planted value appears anywhere in the captured log text. */
export function assertNoLeak (logText: string, planted: readonly string[]): void {
  for (const value of planted) {
    assert.equal(logText.includes(value), false, 'a planted SAMLResponse value appears in the logs')
    // The decoded XML must not appear either (a signature value is a distinctive substring).
    const xml = Buffer.from(value, 'base64').toString('utf8')
    const signatureStart = xml.indexOf('<ds:SignatureValue>')
    if (signatureStart !== -1) {
      const signature = xml.slice(signatureStart + 19, signatureStart + 79)
      assert.equal(logText.includes(signature), false, 'a planted signature value appears in the logs')
    }
  }
}
