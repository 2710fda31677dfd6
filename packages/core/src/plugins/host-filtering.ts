/**
 * Host filtering (docs/security.md, "Host and origin trust"), ahead of everything that reads the
 * request: a Host (or, from a trusted proxy, X-Forwarded-Host) that is not a valid host, an
 * X-Forwarded-Proto other than http/https, or a host that is neither PublicOrigin's nor listed in
 * AllowedHosts answers 400 (`APP_ERR_HOST_NOT_ALLOWED`, page or problem+json) and nothing else
 * runs. The page and the problem name the settings (`<Name>:Hosting:PublicOrigin`,
 * `<Name>:Hosting:AllowedHosts`), never the value sent; the log line names the settings and, for a
 * well-formed host name that is merely not allowed, that host (a malformed one is never logged).
 * Health probes skip only the allow-list (orchestrators address them by pod IP); their Host must
 * still be well formed.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createHostMatcher, hostNameOf, isValidHost, parsePublicOrigin } from '../http/host-trust.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { messageOf } from '../errors.js'
import { sendError } from '../http/responses.js'

export interface HostFilteringOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  /** The configuration root key the refusal names. */
  readonly rootKey: string
}

/** Paths answered for any well-formed host (routes/health.ts). */
const PROBE_PATHS = new Set(['/health', '/health/live', '/health/ready'])

function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

async function hostFiltering (app: FastifyInstance, options: HostFilteringOptions): Promise<void> {
  const hosting = options.config.Hosting
  const origin = hosting.PublicOrigin.trim() === '' ? undefined : parsePublicOrigin(hosting.PublicOrigin, options.environmentName)
  const patterns = [...(origin === undefined ? [] : [new URL(origin).hostname]), ...hosting.AllowedHosts]
  const filtering = patterns.length > 0
  const allowed = createHostMatcher(patterns)

  const { rootKey } = options
  const settings = [`${rootKey}:Hosting:PublicOrigin`, `${rootKey}:Hosting:AllowedHosts`] as const
  const detail = messageOf('APP_ERR_HOST_NOT_ALLOWED', ...settings)
  const refuse = (request: FastifyRequest, reply: FastifyReply, reason: string, host?: string): FastifyReply => {
    request.log.info({ event: 'request.host_refused', reason, ...(host === undefined ? {} : { host }), settings }, 'request refused: host not allowed')
    return sendError(request, reply, 400, { code: 'APP_ERR_HOST_NOT_ALLOWED', detail })
  }

  // A deployment sees a handful of Host values: decide each once. Bounded: when full it starts
  // over, so a flood of distinct hosts costs a regular expression each, never memory.
  const verdicts = new Map<string, 'ok' | 'malformed' | 'not_allowed'>()
  const verdictOf = (host: string): 'ok' | 'malformed' | 'not_allowed' => {
    let verdict = verdicts.get(host)
    if (verdict === undefined) {
      verdict = !isValidHost(host) ? 'malformed' : filtering && !allowed(hostNameOf(host)) ? 'not_allowed' : 'ok'
      if (verdicts.size >= 128) verdicts.clear()
      verdicts.set(host, verdict)
    }
    return verdict
  }

  app.addHook('onRequest', function checkHost (request, reply, done) {
    const protocol = request.protocol
    if (protocol !== 'http' && protocol !== 'https') {
      refuse(request, reply, 'forwarded_proto')
      return
    }
    const verdict = verdictOf(request.host)
    if (verdict === 'malformed' || (verdict === 'not_allowed' && !PROBE_PATHS.has(pathOf(request.url)))) {
      // A well-formed name (isValidHost: at most 261 host characters) helps the operator; a malformed one is the client's noise.
      refuse(request, reply, verdict, verdict === 'not_allowed' ? hostNameOf(request.host) : undefined)
      return
    }
    done()
  })
}

export default fp(hostFiltering, { name: 'host-filtering' })
