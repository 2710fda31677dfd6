/**
 * A SCIM test app: provisioning on with two connections (Contoso and Fabrikam, tenants contoso
 * and fabrikam), a token for each, and a `scim` function that sends a request as a provisioning
 * client would (JSON body as application/scim+json, the connection's bearer token).
 */
import type { TestContext } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { build, type TestApp, type TestAppOptions } from './app.js'

type Settings = NonNullable<TestAppOptions['settings']>

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User'
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group'
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'

export interface ScimRequestOptions {
  readonly body?: unknown
  /** A raw payload instead of JSON. */
  readonly payload?: string
  readonly contentType?: string
  /** The Authorization header (default: the connection's token as Bearer); null: none. */
  readonly authorization?: string | null
  readonly headers?: Record<string, string>
}

export interface ScimTestApp extends TestApp {
  readonly tokens: { readonly Contoso: string, readonly Fabrikam: string }
  /** A request to /scim/v2/<connection><path>, authenticated as that connection unless told otherwise. */
  readonly scim: (method: string, connection: 'Contoso' | 'Fabrikam', path: string, options?: ScimRequestOptions) => Promise<LightMyRequestResponse>
}

export const PROVISIONING: Settings = {
  Provisioning: {
    Enabled: true,
    Connections: {
      Contoso: { Tenant: 'contoso', GroupRoles: ['Orders Admins=Orders.Admin', 'ext-readers=Reader'] },
      Fabrikam: { Tenant: 'fabrikam' }
    }
  }
}

export async function buildScimApp (context: Pick<TestContext, 'after'>, options: TestAppOptions = {}): Promise<ScimTestApp> {
  const t = await build(context, { testSignIn: false, ...options, settings: { ...PROVISIONING, ...options.settings } })
  const provisioning = t.app.provisioning
  if (provisioning === undefined) throw new Error('provisioning is off')
  const tokens = { Contoso: (await provisioning.createToken('Contoso')).token, Fabrikam: (await provisioning.createToken('Fabrikam')).token }
  const scim: ScimTestApp['scim'] = async (method, connection, path, request = {}) => {
    const authorization = request.authorization === undefined ? `Bearer ${tokens[connection]}` : request.authorization
    const payload = request.payload ?? (request.body === undefined ? undefined : JSON.stringify(request.body))
    return await t.app.inject({
      method: method as 'GET',
      url: `/scim/v2/${connection}${path}`,
      headers: {
        ...(authorization === null ? {} : { authorization }),
        ...(payload === undefined ? {} : { 'content-type': request.contentType ?? 'application/scim+json' }),
        ...request.headers
      },
      ...(payload === undefined ? {} : { payload })
    })
  }
  return Object.assign(t, { tokens, scim })
}

/** A minimal user body. */
export function userBody (userName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { schemas: [USER_SCHEMA], userName, active: true, ...extra }
}
