/**
 * Startup rules of `<Root>:Cors`: each origin an exact https origin (http on loopback in
 * Development), never a wildcard; methods and headers are tokens. Problems name the key and index,
 * never the value.
 */
import type { ConfigurationProblem } from './bind.js'
import { problem } from './rules.js'
import { isDevelopmentLoopbackHttp } from '../http/host-trust.js'
import type { CoreConfiguration } from './schema.js'

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** An origin as a browser sends it (scheme://host[:port], lower case, default port left out). */
function isExactOrigin (value: string, environmentName: string): boolean {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return false
  }
  if (url.origin !== value) return false
  return url.protocol === 'https:' || isDevelopmentLoopbackHttp(url, environmentName)
}

function listProblems (values: readonly string[], key: string, valid: (value: string) => boolean, expected: string): ConfigurationProblem[] {
  return values.flatMap((value, index) => valid(value) ? [] : [problem(`${key}:${index}`, `${key}:${index} must be ${expected}.`)])
}

/** `Cors`: exact origins, token methods and headers; `*` is refused everywhere. */
export function corsSettings ({ config, environmentName, rootKey }: { readonly config: CoreConfiguration, readonly environmentName: string, readonly rootKey: string }): ConfigurationProblem[] {
  const key = `${rootKey}:Cors`
  const cors = config.Cors
  return [
    ...listProblems(cors.AllowedOrigins, `${key}:AllowedOrigins`, (value) => isExactOrigin(value, environmentName),
      'an exact origin such as https://spa.example.com (scheme, lower-case host and port only; no path, no trailing slash, no wildcard; http only for a loopback host in Development)'),
    ...listProblems(cors.AllowedMethods, `${key}:AllowedMethods`, (value) => TOKEN.test(value) && value !== '*' && value === value.toUpperCase(), 'an upper-case method name (no wildcard)'),
    ...listProblems(cors.AllowedHeaders, `${key}:AllowedHeaders`, (value) => TOKEN.test(value) && value !== '*', 'a header name (no wildcard)'),
    ...listProblems(cors.ExposedHeaders, `${key}:ExposedHeaders`, (value) => TOKEN.test(value) && value !== '*', 'a header name (no wildcard)')
  ]
}
