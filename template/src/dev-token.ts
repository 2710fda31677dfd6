/**
 * `NODE_ENV=development npm run dev-token --silent -- [--scope <scope>]... [--sub <subject>]`: prints an
 * access token for this app's JwtBearer scheme with `DevelopmentTokens: true`, signed with a key
 * kept under `.state/dev-tokens/` (created on first use). Development only: it refuses to run
 * elsewhere, and the app never accepts such a token outside Development. Not bundled. The core is
 * loaded by name so the file also compiles against a core older than the command (then it says so).
 */
import { APPLICATION_NAME } from './application-name.js'
import { CONTENT_ROOT } from './content-root.js'

type RunDevToken = (options: { readonly contentRoot: string, readonly applicationName?: string }) => Promise<void>
const core = await import('@project-template/core') as unknown as { readonly runDevToken?: RunDevToken }
if (core.runDevToken === undefined) {
  process.stderr.write('npm run dev-token needs a newer @project-template/core (its CHANGELOG: "Development tokens").\n')
  process.exitCode = 1
} else {
  await core.runDevToken({ contentRoot: CONTENT_ROOT, applicationName: APPLICATION_NAME })
}
