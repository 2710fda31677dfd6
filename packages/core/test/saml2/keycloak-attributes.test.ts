/**
 * Keycloak's built-in SAML mappers, as the test IdP sends them: "X500 email"
 * (urn:oid:1.2.840.113549.1.9.1), "X500 givenName" / "X500 surname" (urn:oid:2.5.4.42 /
 * urn:oid:2.5.4.4) and the "Group list" mapper's `member` attribute with full group paths
 * (`/admins`). The email OID is mapped by default; given name and surname are kept as original
 * claims only; `member` becomes `application:group` only through ClaimMappings
 * (docs/providers/keycloak.md). A group that arrives as a path while a policy names it without
 * the slash is reported once per process (`authorization.group_path_mismatch`), and a policy naming the path works.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp, cookieHeaderFrom, storedSession, type TestApp } from '../helpers/app.js'
import { postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { TestIdentityProvider, type TestUser } from '../helpers/saml2/identity-provider.js'

const KEYCLOAK_USER: TestUser = {
  nameId: 'G-5f3c2a',
  attributes: {
    'urn:oid:1.2.840.113549.1.9.1': ['kim@example.test'],
    'urn:oid:2.5.4.42': ['Kim'],
    'urn:oid:2.5.4.4': ['Keller'],
    member: ['/admins', '/staff/reviewers']
  }
}

type Authorization = Record<string, string | string[]>

async function buildKeycloakApp (idp: TestIdentityProvider, options: { claimMappings?: Record<string, string>, authorization?: Authorization } = {}): Promise<TestApp> {
  const subject = await buildTestApp({
    nodeEnv: 'development',
    testSignIn: false,
    settings: {
      ...(options.authorization === undefined ? {} : { Authorization: options.authorization }),
      Authentication: {
        Providers: {
          Saml2: {
            Enabled: true,
            EntityId: SP_ENTITY_ID,
            MetadataUrl: idp.metadataUrl,
            ...(options.claimMappings === undefined ? {} : { ClaimMappings: options.claimMappings })
          }
        }
      }
    }
  })
  await waitForSaml2(subject.app)
  return subject
}

async function signIn (subject: TestApp, idp: TestIdentityProvider): Promise<LightMyRequestResponse> {
  const flow = await startSaml2SignIn(subject.app)
  const samlResponse = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: KEYCLOAK_USER, inResponseTo: flow.request.id })
  const response = await postToAcs(subject.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
  assert.equal(response.headers.location, '/')
  assert.equal(setsSessionCookie(response), true)
  return response
}

async function claimsOf (subject: TestApp, response: LightMyRequestResponse): Promise<Array<[string, string]>> {
  const stored = await storedSession(subject.app, subject.keyRing, cookieHeaderFrom(response))
  return (stored?.claims ?? []).map((claim) => [claim.type, claim.value])
}

const ADMIN_BY_GROUP = { RoleClaimType: 'application:group' }

describe('Saml2 with Keycloak\'s default SAML mappers', () => {
  const idp = new TestIdentityProvider()
  const apps: TestApp[] = []
  const build = async (options: Parameters<typeof buildKeycloakApp>[1] = {}): Promise<TestApp> => {
    const subject = await buildKeycloakApp(idp, options)
    apps.push(subject)
    return subject
  }
  before(async () => { await idp.start() })
  after(async () => {
    for (const subject of apps) await subject.app.close()
    await idp.stop()
  })

  test('defaults: the X500 email OID becomes application:email; given name, surname and member stay original claims only', async () => {
    const subject = await build()
    const claims = await claimsOf(subject, await signIn(subject, idp))
    const mapped = claims.filter(([type]) => type.startsWith('application:')).sort()
    assert.deepEqual(mapped, [['application:email', 'kim@example.test'], ['application:subject', 'G-5f3c2a']])
    for (const original of [['urn:oid:2.5.4.42', 'Kim'], ['urn:oid:2.5.4.4', 'Keller'], ['member', '/admins'], ['member', '/staff/reviewers']]) {
      assert.ok(claims.some(([type, value]) => type === original[0] && value === original[1]), `original claim ${String(original[0])}`)
    }
    // No group claim, so nothing to report about group paths.
    assert.equal(subject.logs.events('authorization.group_path_mismatch').length, 0)
  })

  test('ClaimMappings member -> group: the full paths become application:group, and the path shape is reported once (no policy reads groups)', async () => {
    const subject = await build({ claimMappings: { member: 'group' } })
    const claims = await claimsOf(subject, await signIn(subject, idp))
    assert.deepEqual(claims.filter(([type]) => type === 'application:group').map(([, value]) => value), ['/admins', '/staff/reviewers'])
    await signIn(subject, idp)
    const reports = subject.logs.events('authorization.group_path_mismatch')
    assert.equal(reports.length, 1, 'once per process')
    assert.equal(reports[0]?.level, 30)
    assert.equal(reports[0]?.provider, 'Saml2')
    assert.deepEqual(reports[0]?.keys, [])
    assert.equal(subject.logs.text().includes('/staff/reviewers'), false, 'no attribute value is logged')
  })

  test('a policy naming the group without its slash denies, and the mismatch is a warning naming the key', async () => {
    const subject = await build({ claimMappings: { member: 'group' }, authorization: { ...ADMIN_BY_GROUP, AdministratorRoles: ['admins'] } })
    const response = await signIn(subject, idp)
    const administration = await subject.app.inject({ method: 'GET', url: '/api/application-information/administration', headers: { cookie: cookieHeaderFrom(response), accept: 'application/json' } })
    assert.equal(administration.statusCode, 403)
    const reports = subject.logs.events('authorization.group_path_mismatch')
    assert.equal(reports.length, 1)
    assert.equal(reports[0]?.level, 40)
    assert.deepEqual(reports[0]?.keys, ['ProjectTemplate:Authorization:AdministratorRoles'])
  })

  test('a policy naming the group path allows, and nothing is reported', async () => {
    const subject = await build({ claimMappings: { member: 'group' }, authorization: { ...ADMIN_BY_GROUP, AdministratorRoles: ['/admins'] } })
    const response = await signIn(subject, idp)
    const administration = await subject.app.inject({ method: 'GET', url: '/api/application-information/administration', headers: { cookie: cookieHeaderFrom(response), accept: 'application/json' } })
    assert.equal(administration.statusCode, 200)
    assert.equal(subject.logs.events('authorization.group_path_mismatch').length, 0)
  })
})
