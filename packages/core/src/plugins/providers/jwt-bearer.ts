/**
 * The JwtBearer scheme type (`Authentication:Schemes:<Name>` with `Type: JwtBearer`, issue 35):
 * one bearer scheme per enabled section or provider-source definition, opened like every other
 * provider (plugins/providers/open-provider.ts) and kept in the same registry, so it works per
 * named scheme and per runtime customer (its tenant attached). It declares no endpoint and signs
 * no one in: the bearer handler authenticates API calls with it, and its `challenge` (reached only
 * if an app calls it) answers 401 `WWW-Authenticate: Bearer`. Discovery starts when the app is
 * ready (a configured scheme) or on first use (one from the provider source); /health/ready
 * reports it. A scheme from the provider source that could be offered the opaque tokens of another
 * introspecting scheme is refused (bearer/scheme-routing.ts), naming its TokenPrefix.
 */
import { DEVELOPMENT_TOKEN_ALGORITHM, developmentTokenIssuer, developmentTokenKeys } from '../../dev-tokens/signing-key.js'
import { isDevelopment } from '../../environment-name.js'
import { isDevelopmentLoopbackHttp } from '../../http/host-trust.js'
import { JwtBearerScheme } from '../../bearer/jwt-bearer-scheme.js'
import { runtimeRoutingProblems } from '../../bearer/scheme-routing.js'
import type { ProviderInstance } from '../../providers/provider-instances.js'
import { OUTBOUND_TIMEOUT_SECONDS } from '../../oidc/relying-party.js'
import type { ProviderRegistration } from '../authentication.js'
import { challengeAnswer } from '../../bearer/bearer-answers.js'
import { sendAnswer } from '../../http/responses.js'

/** DANGEROUS: http to the issuer, only for a loopback host in Development (as for OpenID Connect). */
function allowsInsecureRequests (settings: { readonly Authority: string, readonly JwksUri: string }, environmentName: string): boolean {
  const url = settings.Authority !== '' ? settings.Authority : settings.JwksUri
  try {
    return isDevelopmentLoopbackHttp(new URL(url), environmentName)
  } catch {
    return false
  }
}

/**
 * DANGEROUS: the development-token issuer and key (dev-tokens/), only for a configured scheme with
 * DevelopmentTokens in Development (the startup rule refuses the key elsewhere; this is the
 * second lock), read from the app root's `.state/` only.
 */
function developmentTokensOf (options: Parameters<typeof registerJwtBearer>[1]): { developmentTokens?: NonNullable<ConstructorParameters<typeof JwtBearerScheme>[0]['developmentTokens']> } {
  const { instance, environmentName, contentRoot, runtime } = options
  if (instance.settings.DevelopmentTokens !== true || !isDevelopment(environmentName) || runtime !== undefined || contentRoot === undefined) return {}
  return { developmentTokens: { issuer: developmentTokenIssuer(instance.scheme), algorithms: new Set([DEVELOPMENT_TOKEN_ALGORITHM]), keys: developmentTokenKeys(contentRoot) } }
}

export const registerJwtBearer: ProviderRegistration<Extract<ProviderInstance, { protocol: 'JwtBearer' }>> = (app, options) => {
  const settings = options.instance.settings
  const scheme = new JwtBearerScheme({
    scheme: options.instance.scheme,
    settings,
    keyPrefix: options.instance.keyPrefix,
    allowInsecureRequests: allowsInsecureRequests(settings, options.environmentName),
    timeoutMs: OUTBOUND_TIMEOUT_SECONDS * 1000,
    ...developmentTokensOf(options),
    ...(options.runtime === undefined ? {} : { runtime: { ...(options.runtime.tenant === undefined ? {} : { tenant: options.runtime.tenant }) } }),
    ...(options.runtime?.dispatcher === undefined ? {} : { dispatcher: options.runtime.dispatcher }),
    onUnknownKeyRefetch: (found) => {
      app.log.info({ event: 'bearer.signing_keys.refetched', scheme: options.instance.scheme, reason: 'unknown_key', found }, 'bearer scheme signing keys fetched again for an unknown key id')
    }
  })
  if (scheme.developmentIssuer !== undefined) app.log.warn({ event: 'bearer.development_tokens', scheme: scheme.scheme }, 'this bearer scheme also accepts development tokens (DevelopmentTokens, Development only)')
  if (options.runtime !== undefined) {
    // An opaque token goes to one issuer only (issue 40, item 1): refused at the reload, naming the key.
    const registered = [...app.authentication.providers.values()].flatMap((provider) => provider.credentialScheme instanceof JwtBearerScheme ? [provider.credentialScheme] : [])
    const problems = runtimeRoutingProblems(scheme, options.instance.keyPrefix, registered)
    if (problems.length > 0) throw Object.assign(new Error('introspection routing'), { problems })
  } else {
    app.addHook('onReady', async () => {
      // In the background: a failed discovery is retried on use, and readiness reports it meanwhile.
      scheme.open().catch(() => { app.log.warn({ event: 'bearer.discovery.failed', scheme: scheme.scheme }, 'bearer scheme discovery failed; retried on use') })
    })
  }
  return {
    provider: {
      scheme: scheme.scheme,
      displayName: settings.DisplayName === '' ? scheme.scheme : settings.DisplayName,
      protocol: 'JwtBearer',
      paths: [],
      endpoints: [],
      credentialScheme: scheme,
      ...(options.runtime === undefined ? {} : { runtime: true }),
      // Its own challenge, as the bearer handler answers it (bearer/bearer-answers.ts).
      challenge: (request, reply) => sendAnswer(request, reply, challengeAnswer(request.routeOptions.config ?? {}, `${request.protocol}://${request.host}`)),
      status: () => scheme.status()
    },
    stop: () => {}
  }
}
