/**
 * The environment name's one switch: whether it is Development, whose explicit switches may relax
 * a rule. A leaf, so that host trust (http/) and configuration (config/environment.ts, which
 * works out the rest of the environment facts) decide it the same way.
 */

/** The environment whose explicit switches may relax a rule (contract: AllowInsecureHttp). */
export const DEVELOPMENT = 'Development'

export function isDevelopment (environmentName: string): boolean {
  return environmentName === DEVELOPMENT
}
