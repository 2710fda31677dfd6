/**
 * RFC 9728 protected-resource metadata (issue 35; issue 40, item 15), registered by
 * plugins/bearer.ts while a JwtBearer scheme is configured: `GET /.well-known/oauth-protected-resource`
 * (anonymous, in the reviewed inventory) naming the configured schemes' issuers; and for each
 * resource under a path (a configured audience such as `https://app.example.com/mcp`),
 * `GET /.well-known/oauth-protected-resource/mcp` naming that resource and the issuers of the
 * schemes that accept it (RFC 9728 section 3.1; 404 on another origin).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { BearerRoutes } from '../bearer/bearer-routes.js'
import type { JwtBearerScheme } from '../bearer/jwt-bearer-scheme.js'
import { protectedResourceMetadata, RESOURCE_METADATA_PATH, resourceMetadataPathOf, resourceOf } from '../bearer/resource-metadata.js'
import { sendProblem } from '../http/responses.js'

export interface ResourceMetadataOptions {
  readonly publicOrigin: string
  readonly scopesSupported: readonly string[]
  /** The configured schemes' names and resources under a path. */
  readonly routes: Pick<BearerRoutes, 'names' | 'pathResources'>
  /** The registered JwtBearer schemes. */
  readonly schemes: () => readonly JwtBearerScheme[]
}

export function publishResourceMetadata (app: FastifyInstance, options: ResourceMetadataOptions): void {
  const { publicOrigin, routes } = options
  const issuersOf = (names: ReadonlySet<string>): string[] => options.schemes().filter((scheme) => names.has(scheme.scheme)).map((scheme) => scheme.issuer ?? scheme.configuredIssuer)
  const originOf = (request: FastifyRequest): string => resourceOf(publicOrigin, `${request.protocol}://${request.host}`)
  const send = async (reply: FastifyReply, resource: string, issuers: readonly string[]): Promise<FastifyReply> => await reply.header('cache-control', 'public, max-age=3600').type('application/json')
    .send(protectedResourceMetadata(resource, issuers, options.scopesSupported))
  app.get(RESOURCE_METADATA_PATH, { config: { allowAnonymous: true } }, async (request, reply) => await send(reply, originOf(request), issuersOf(routes.names)))
  for (const [path, resources] of routes.pathResources) {
    app.get(resourceMetadataPathOf(path), { config: { allowAnonymous: true } }, async (request, reply) => {
      const origin = new URL(originOf(request)).origin
      const resource = resources.find((candidate) => candidate.origin === origin)
      if (resource === undefined) return sendProblem(request, reply, 404, { code: 'APP_ERR_NOT_FOUND' })
      return await send(reply, resource.resource, issuersOf(new Set(resource.schemes)))
    })
  }
}
