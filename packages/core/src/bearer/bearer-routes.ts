/**
 * What the routes that accept bearer tokens get from the configuration (issue 35, item 2; issue
 * 40, items 1, 4, 15 to 17): whether a route accepts them (`Authentication:Bearer:PathPrefixes`,
 * or its `config.bearer`), its challenge settings (the published metadata, the configured scopes,
 * the proof algorithms of schemes with RequireDPoP), the configured schemes' resources under a
 * path, the check of a route's `config.bearerSchemes`, and the origin of a DPoP proof's `htu`.
 * Plain inputs (the enabled JwtBearer instances and a few keys), no Fastify types.
 */
import { createError } from '../errors.js'
import { isDevelopment } from '../environment-name.js'
import { restrictsHosts } from '../http/host-trust.js'
import type { ChallengeSettings } from './bearer-answers.js'
import { DEFAULT_VALID_ALGORITHMS } from './jwt-bearer-scheme.js'
import { pathResourcesOf, resourceMetadataPathOf, resourceOf, type PathResource } from './resource-metadata.js'
import type { BearerSectionConfiguration, JwtBearerInstance } from './settings-schema.js'

/** The configured API routes' common facts, from the enabled JwtBearer instances. */
export interface BearerRoutes {
  /** Whether any JwtBearer scheme is configured (metadata is then published). */
  readonly configured: boolean
  /** The configured schemes' names (a route's `config.bearerSchemes` may name only these, without a provider source). */
  readonly names: ReadonlySet<string>
  /** The challenge of every bearer route, and of a path under the prefixes that no route serves. */
  readonly challenge: ChallengeSettings
  /** The configured schemes' resources under a path (resource-metadata.ts). */
  readonly pathResources: ReadonlyMap<string, readonly PathResource[]>
}

/** The routes' facts from the enabled JwtBearer `instances`, `Authentication:Bearer` and `Hosting:PublicOrigin`. */
export function bearerRoutesOf (instances: readonly JwtBearerInstance[], section: BearerSectionConfiguration, publicOrigin: string): BearerRoutes {
  const configured = instances.length > 0
  const required = instances.flatMap((instance) => instance.settings.RequireDPoP
    ? (instance.settings.ValidAlgorithms.length === 0 ? DEFAULT_VALID_ALGORITHMS : instance.settings.ValidAlgorithms)
    : [])
  const scope = section.ScopesSupported.join(' ')
  return {
    configured,
    names: new Set(instances.map((instance) => instance.scheme)),
    challenge: {
      ...(configured ? { resourceMetadataOrigin: publicOrigin } : {}),
      ...(required.length === 0 ? {} : { dpopAlgorithms: [...new Set(required)] }),
      ...(scope === '' ? {} : { bearerScope: scope })
    },
    pathResources: pathResourcesOf(instances.map((instance) => ({ scheme: instance.scheme, audiences: instance.settings.Audiences })), publicOrigin)
  }
}

/** Whether the route at `url` with `config.bearer` (`declared`) accepts bearer tokens. */
export function acceptsBearer (url: string, declared: boolean | undefined, pathPrefixes: readonly string[]): boolean {
  return declared ?? pathPrefixes.some((prefix) => url.startsWith(prefix))
}

/** The challenge settings of the route at `url`: the common ones, and its own metadata document when its path is a resource of its own. */
export function routeChallengeOf (routes: BearerRoutes, url: string): ChallengeSettings {
  const own = routes.pathResources.get(url)
  return own === undefined ? routes.challenge : { ...routes.challenge, resourceMetadataPath: { path: resourceMetadataPathOf(url), origins: own.map((resource) => resource.origin) } }
}

/**
 * A route's `config.bearerSchemes` as a set (undefined: not restricted); a name that is not an
 * enabled JwtBearer scheme is refused at startup unless the provider source may add it.
 */
export function routeSchemesOf (declared: readonly string[] | undefined, route: string, configured: ReadonlySet<string>, providerSource: boolean): ReadonlySet<string> | undefined {
  if (declared === undefined) return undefined
  const unknown = declared.find((name) => !configured.has(name))
  if (declared.length === 0 || (unknown !== undefined && !providerSource)) throw createError('APP_ERR_ROUTE_BEARER_SCHEMES', route)
  return new Set(declared)
}

/** Where a request's origin is one the operator chose: PublicOrigin, AllowedHosts without `*`, or Development. */
export interface OriginSettings {
  readonly publicOrigin: string
  readonly allowedHosts: readonly string[]
  readonly environmentName: string
}

/** PublicOrigin, AllowedHosts without `*`, or Development: a request's origin is one the operator chose. */
export function hasValidatedOrigin (settings: OriginSettings): boolean {
  return settings.publicOrigin.trim() !== '' || isDevelopment(settings.environmentName) || restrictsHosts(settings.allowedHosts)
}

/**
 * The origin a DPoP proof's `htu` names, from the request's own origin: PublicOrigin; else the
 * request's own where host filtering validated its Host or in Development; else none, and proofs
 * are refused (a provider-source app may gain a JwtBearer scheme the startup rule never saw).
 */
export function proofOrigins (settings: OriginSettings): (requestOrigin: string) => string | undefined {
  const configured = settings.publicOrigin.trim()
  if (configured !== '') {
    const origin = resourceOf(configured, '')
    return () => origin
  }
  return hasValidatedOrigin(settings) ? (requestOrigin) => requestOrigin : () => undefined
}
