/**
 * The `dev-token` command an app's `dev-token.ts` runs ({@link runDevToken}; issue 40, item 13;
 * `dotnet user-jwts`): `NODE_ENV=development npm run dev-token -- [--scheme <Name>] [--scope <s>]...`
 * prints one access token (only the token, on stdout, so `$(npm run dev-token --silent)` works) for a
 * JwtBearer scheme with `DevelopmentTokens: true`, signed with the app's development key
 * (dev-tokens/, created under `.state/dev-tokens/` on first use). It refuses to run outside
 * Development (exit 1) before it reads any configuration or key, and with configuration the app
 * would refuse; exit 2: a usage error. Never prints a configured value.
 */
import { environmentNameFrom } from './config/load.js'
import { CoreError } from './errors.js'
import { isDevelopment } from './environment-name.js'
import { DEFAULT_DEVELOPMENT_TOKEN_LIFETIME_SECONDS, mintDevelopmentToken } from './dev-tokens/mint.js'
import { enabledProviderInstancesUnder } from './providers/provider-instances.js'
import { loadEntryPointConfiguration } from './startup.js'

const USAGE = `Usage: NODE_ENV=development npm run dev-token -- [--scheme <Name>] [--scope <scope>]... [--sub <subject>] [--client <client id>] [--claim <name>=<value>]... [--lifetime <seconds>]
Prints an access token for a JwtBearer scheme with DevelopmentTokens: true (Development only).
`

/** What {@link runDevToken} needs. @public @experimental */
export interface DevTokenOptions {
  /** The app root, as for `runServer`: the key lives under its `.state/dev-tokens/`. */
  readonly contentRoot: string
  /** The command's arguments; default `process.argv.slice(2)`. */
  readonly args?: readonly string[]
  /** The application name (configuration root key), as for `runServer`. Default `ProjectTemplate`. */
  readonly applicationName?: string
  /** The environment; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv
}

interface Arguments {
  scheme?: string
  scopes: string[]
  subject?: string
  clientId?: string
  claims: Record<string, string | string[]>
  lifetimeSeconds: number
}

class UsageError extends CoreError {}

function parse (args: readonly string[]): Arguments {
  const parsed: Arguments = { scopes: [], claims: {}, lifetimeSeconds: DEFAULT_DEVELOPMENT_TOKEN_LIFETIME_SECONDS }
  for (let index = 0; index < args.length; index += 2) {
    const name = args[index] as string
    const value = args[index + 1]
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${name} needs a value`)
    if (name === '--scheme') parsed.scheme = value
    else if (name === '--scope') parsed.scopes.push(...value.split(' ').filter((scope) => scope !== ''))
    else if (name === '--sub') parsed.subject = value
    else if (name === '--client') parsed.clientId = value
    else if (name === '--claim') {
      const [claim, ...rest] = value.split('=')
      if (claim === undefined || claim === '' || rest.length === 0 || ['iss', 'aud', 'exp', 'iat', 'nbf', 'sub', 'jti', 'cnf'].includes(claim)) throw new UsageError(`--claim takes <name>=<value> (not iss, aud, exp, iat, nbf, sub, jti, cnf): ${claim ?? ''}`)
      const known = parsed.claims[claim]
      parsed.claims[claim] = known === undefined ? rest.join('=') : [known, rest.join('=')].flat()
    } else if (name === '--lifetime') {
      const seconds = Number(value)
      if (!Number.isInteger(seconds) || seconds < 60 || seconds > 86_400) throw new UsageError('--lifetime takes whole seconds from 60 to 86400')
      parsed.lifetimeSeconds = seconds
    } else throw new UsageError(`unknown argument ${name}`)
  }
  return parsed
}

/** Prints a development token; sets `process.exitCode` (0 printed, 1 refused, 2 usage). @public @experimental */
export async function runDevToken (options: DevTokenOptions): Promise<void> {
  const args = options.args ?? process.argv.slice(2)
  const env = options.env ?? process.env
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE)
    return
  }
  const environmentName = environmentNameFrom(env.NODE_ENV)
  if (!isDevelopment(environmentName)) {
    process.stderr.write('dev-token: refused: development tokens exist only in Development (NODE_ENV=development); this environment is not Development.\n')
    process.exitCode = 1
    return
  }
  let parsed: Arguments
  try {
    parsed = parse(args)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    process.stderr.write(`dev-token: ${error.message}\n${USAGE}`)
    process.exitCode = 2
    return
  }
  const { loaded } = await loadEntryPointConfiguration(env, options.contentRoot, options.applicationName)
  if (loaded.errors.length > 0) {
    process.stderr.write(`dev-token: the configuration is invalid (${loaded.errors.map((problem) => problem.key).join(', ')}): run npm run check-config.\n`)
    process.exitCode = 1
    return
  }
  const schemes = enabledProviderInstancesUnder(loaded.config, loaded.applicationName).flatMap((instance) => instance.protocol === 'JwtBearer' && instance.settings.DevelopmentTokens === true ? [instance] : [])
  const scheme = parsed.scheme === undefined ? (schemes.length === 1 ? schemes[0] : undefined) : schemes.find((instance) => instance.scheme === parsed.scheme)
  if (scheme === undefined) {
    const which = parsed.scheme === undefined ? (schemes.length === 0 ? 'no JwtBearer scheme sets' : 'several JwtBearer schemes set (choose one with --scheme)') : `the JwtBearer scheme ${parsed.scheme} does not set`
    process.stderr.write(`dev-token: ${which} Authentication:Schemes:<Name>:DevelopmentTokens to true.\n`)
    process.exitCode = 1
    return
  }
  const token = await mintDevelopmentToken({
    contentRoot: options.contentRoot,
    scheme: scheme.scheme,
    audience: scheme.settings.Audiences[0] as string,
    scopes: parsed.scopes,
    claims: parsed.claims,
    lifetimeSeconds: parsed.lifetimeSeconds,
    ...(parsed.subject === undefined ? {} : { subject: parsed.subject }),
    ...(parsed.clientId === undefined ? {} : { clientId: parsed.clientId })
  })
  process.stdout.write(`${token}\n`)
  process.exitCode = 0
}
