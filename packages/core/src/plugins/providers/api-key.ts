/**
 * The ApiKey scheme type's opening (`Authentication:Schemes:<Name>` with `Type: ApiKey`, issue 42):
 * an entry in the scheme registry that declares no endpoint and signs no one in (its
 * `credentialScheme` keeps it off the login page and /External/Challenge). The keys themselves
 * are authenticated by the ApiKey credential type plugins/api-keys.ts registers with the bearer
 * handler; its challenge (reached only if an app calls it) answers 401 `WWW-Authenticate: Bearer`.
 * Never opened from the provider source (providers/runtime-definitions.ts refuses the type).
 */
import type { ProviderInstance } from '../../providers/provider-instances.js'
import type { ProviderRegistration } from '../authentication.js'
import { challengeAnswer } from '../../bearer/bearer-answers.js'
import { sendAnswer } from '../../http/responses.js'

export const registerApiKey: ProviderRegistration<Extract<ProviderInstance, { protocol: 'ApiKey' }>> = (_app, options) => {
  const { scheme, settings } = options.instance
  return {
    provider: {
      scheme,
      displayName: settings.DisplayName === '' ? scheme : settings.DisplayName,
      protocol: 'ApiKey',
      paths: [],
      endpoints: [],
      credentialScheme: { type: 'ApiKey', scheme },
      challenge: (request, reply) => sendAnswer(request, reply, challengeAnswer(request.routeOptions.config ?? {}, `${request.protocol}://${request.host}`)),
      status: () => ({ available: true })
    },
    stop: () => {}
  }
}
