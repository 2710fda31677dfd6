/**
 * Two app instances as a deployment runs them (issues 41 and 42, "tests against real pieces"): a
 * real redis-server as the state store, a real PostgreSQL as the directory store
 * (`Provisioning:Store:Provider` PostgreSql; API keys live beside it), oidc-provider signing people
 * in, and a balancer in front that keeps the Host header (`Hosting:PublicOrigin` is its origin).
 * Each instance listens on 127.0.0.1 with its own Redis and PostgreSQL connections and the one
 * key ring they share. A browser's sign-in goes to the instance the test names (the balancer pins
 * it), so a person signs in on A and on B with the one redirect URI the IdP knows; every other
 * request names its instance. One connection, Contoso (tenant contoso), owns the OpenIdConnect
 * scheme's users. Started once per suite in `before`, stopped in `after`.
 */
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { after, before } from 'node:test'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import type { TestSettings } from '../../src/testing/app.js'
import { buildTestApp, type TestApp, type TestAppOptions } from './app.js'
import { Balancer, INSTANCE_HEADER } from './balancer.js'
import { PostgresServer } from './postgres-server.js'
import { signInOverHttp, type HttpSignIn } from './providers/api-sign-in.js'
import { startOidcIdp, type OidcIdp, type OidcIdpOptions } from './providers/oidc-idp.js'
import { waitUntilReady } from './providers/provider-app.js'
import { RedisServer } from './redis-server.js'
import { waitFor } from './wait.js'

const CLIENT_ID = 'two-instances-client'
const CLIENT_SECRET = 'two-instances-client-secret-PLANTED-41'

export interface Instance extends TestApp {
  readonly name: 'A' | 'B'
}

export interface RedisPostgresInstancesOptions {
  /** The IdP's accounts and any other option but its client. */
  readonly idp: Omit<OidcIdpOptions, 'clientId' | 'clientSecret'>
  /** Keys added to `Authentication:Providers:OpenIdConnect` (ClaimMappings, ...). */
  readonly openIdConnect?: TestSettings
  /** `Authentication` keys besides Providers (Schemes, ...). */
  readonly authentication?: TestSettings
  /** The app's routes, on both instances. */
  readonly configure?: (app: Parameters<NonNullable<TestAppOptions['configure']>>[0], name: Instance['name']) => void
}

export interface RedisPostgresInstances {
  readonly idp: OidcIdp
  readonly redis: RedisServer
  readonly postgres: PostgresServer
  /** The directory store's database on {@link postgres}. */
  readonly database: string
  readonly balancer: Balancer
  readonly a: Instance
  readonly b: Instance
  /** A token of the Contoso connection. */
  readonly connectionToken: string
  /** A full sign-in as `login` whose every request goes to `on` (nothing asserted). */
  readonly signIn: (on: Instance, login: string) => Promise<HttpSignIn>
  /** A request through the balancer to `on`; redirects are not followed. */
  readonly request: (on: Instance, path: string, init?: { readonly cookie?: string, readonly authorization?: string, readonly accept?: string, readonly method?: string, readonly json?: unknown }) => Promise<Response>
  /** A SCIM request of the Contoso connection to `on`, over HTTP. */
  readonly scim: (on: Instance, method: string, path: string, body?: unknown) => Promise<{ status: number, json: Record<string, any> }>
}

async function startInstance (name: Instance['name'], settings: TestSettings, keyRing: ReturnType<typeof createKeyRing>, balancer: Balancer, configure: RedisPostgresInstancesOptions['configure']): Promise<Instance> {
  const test = await buildTestApp({ nodeEnv: 'development', settings, keyRing, testSignIn: false, ...(configure === undefined ? {} : { configure: (app) => { configure(app, name) } }) })
  await test.app.listen({ host: '127.0.0.1', port: 0 })
  await waitFor(() => test.app.state.status().available, `instance ${name}'s Redis state store`)
  balancer.add(name, (test.app.server.address() as AddressInfo).port)
  return { ...test, name }
}

/** {@link RedisPostgresInstances} for the suite: started in `before`, stopped in `after`; the fields are set once `before` has run. */
export function useRedisPostgresInstances (options: RedisPostgresInstancesOptions): RedisPostgresInstances {
  const redis = new RedisServer()
  const balancer = new Balancer()
  const fixture = { redis, balancer } as { -readonly [K in keyof RedisPostgresInstances]: RedisPostgresInstances[K] }
  const request: RedisPostgresInstances['request'] = async (on, path, init = {}) => await fetch(new URL(path, balancer.origin), {
    method: init.method ?? 'GET',
    headers: {
      [INSTANCE_HEADER]: on.name,
      accept: init.accept ?? 'application/json',
      ...(init.cookie === undefined ? {} : { cookie: init.cookie }),
      ...(init.authorization === undefined ? {} : { authorization: init.authorization }),
      ...(init.json === undefined ? {} : { 'content-type': 'application/json' })
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000)
  })
  fixture.request = request
  fixture.signIn = async (on, login) => {
    balancer.pinned = on.name
    try {
      return await signInOverHttp(balancer.origin, login)
    } finally {
      balancer.pinned = undefined
    }
  }
  fixture.scim = async (on, method, path, body) => {
    const response = await fetch(new URL(`/scim/v2/Contoso${path}`, balancer.origin), {
      method,
      headers: { [INSTANCE_HEADER]: on.name, authorization: `Bearer ${fixture.connectionToken}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000)
    })
    const text = await response.text()
    return { status: response.status, json: text === '' ? {} : JSON.parse(text) }
  }

  before(async () => {
    fixture.postgres = new PostgresServer()
    await fixture.postgres.start()
    await redis.start()
    await balancer.listen()
    fixture.idp = await startOidcIdp({ ...options.idp, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET })
    fixture.database = 'two_instances'
    const settings: TestSettings = {
      State: { Provider: 'Redis', Redis: { ConnectionString: redis.connectionString, TimeoutMilliseconds: 2000 } },
      Hosting: { PublicOrigin: balancer.origin },
      Authentication: {
        DefaultChallengeScheme: 'OpenIdConnect',
        ...options.authentication,
        Providers: { OpenIdConnect: { Enabled: true, Authority: fixture.idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET, ...options.openIdConnect } }
      },
      Provisioning: {
        Enabled: true,
        Store: { Provider: 'PostgreSql', PostgreSql: { ConnectionString: await fixture.postgres.createDatabase(fixture.database) } },
        Connections: { Contoso: { Tenant: 'contoso', Schemes: ['OpenIdConnect'] } }
      }
    }
    const keyRing = createKeyRing([randomBytes(32)])
    fixture.a = await startInstance('A', settings, keyRing, balancer, options.configure)
    fixture.b = await startInstance('B', settings, keyRing, balancer, options.configure)
    await fixture.idp.configure(`${balancer.origin}/signin-oidc`)
    for (const name of ['A', 'B']) {
      balancer.pinned = name
      await waitUntilReady(balancer.origin)
    }
    balancer.pinned = undefined
    fixture.connectionToken = (await fixture.a.app.provisioning!.createToken('Contoso')).token
  })
  after(async () => {
    await fixture.a?.app.close()
    await fixture.b?.app.close()
    await balancer.close()
    await fixture.idp?.close()
    await redis.dispose()
    await fixture.postgres?.dispose()
  })
  return fixture
}
