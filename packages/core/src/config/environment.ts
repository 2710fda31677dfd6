/**
 * The environment facts. "Development" is decided here, once: the name comes from NODE_ENV
 * (config/load.ts), buildApp works the facts out with {@link environmentOf} and passes them down;
 * code that runs before the app exists (validation, the entry points) asks {@link isDevelopment}
 * (environment-name.ts, which host trust asks too).
 */
import { isDevelopment } from '../environment-name.js'
import type { CoreConfiguration } from './schema.js'

export { DEVELOPMENT, isDevelopment } from '../environment-name.js'

export interface EnvironmentFacts {
  readonly name: string
  /** Stack traces on error pages, `http` allowed for loopback endpoints and the PublicOrigin, no HSTS. */
  readonly development: boolean
  /**
   * The Development-only `Authentication:Cookie:AllowInsecureHttp` override is on: the session and
   * anti-forgery cookies drop `__Host-` and Secure, the correlation cookie drops `__Host-`.
   */
  readonly insecureCookies: boolean
}

export function environmentOf (config: CoreConfiguration, environmentName: string): EnvironmentFacts {
  const development = isDevelopment(environmentName)
  return Object.freeze({ name: environmentName, development, insecureCookies: development && config.Authentication.Cookie.AllowInsecureHttp })
}
